import { readFile } from 'node:fs/promises';
import sharp from 'sharp';
import { imageSearchItem, webSearchItem } from '../fakes/index.js';
import { startFakeProviders, type FakeProviders } from '../helpers/fake-world.js';
import { fixturePath } from '../helpers/fixtures.js';

/**
 * A small web on 127.0.0.1 where the astronaut photo has been copied: a gallery page, a mirrored
 * copy, a re-encoded copy and an unrelated rocket picture, found by the four fake providers.
 * One result title carries markup and one result a `javascript:` link, as the open web can.
 * `world.settings` point the service at it.
 */
export async function startWebWorld(): Promise<FakeProviders> {
  const world = await startFakeProviders();
  const { web, vision, regional, search, llm } = world;
  const copy = web.addImage('/photos/astronaut.jpg', await sharp(fixturePath('astronaut.png')).jpeg({ quality: 80 }).toBuffer(), 'image/jpeg');
  const mirrored = web.addImage('/photos/astronaut-mirrored.png', await sharp(fixturePath('astronaut.png')).flop().png().toBuffer());
  const rocket = web.addImage('/photos/rocket.jpg', await readFile(fixturePath('rocket.jpg')), 'image/jpeg');
  const gallery = web.addPage(
    '/gallery',
    `<!doctype html><html><head><title>Gallery</title><meta property="og:image" content="${copy}"></head><body><img src="${copy}"></body></html>`,
  );

  vision.detection = {
    webEntities: [{ entityId: '/m/shuttle', description: 'Space Shuttle mission crew', score: 0.8 }],
    fullMatchingImages: [{ url: copy, score: 0.9 }],
    pagesWithMatchingImages: [{ url: gallery, pageTitle: '우주비행사 공식 초상 사진 갤러리', fullMatchingImages: [{ url: copy }] }],
    bestGuessLabels: [{ label: 'astronaut', languageCode: 'en' }],
  };
  regional.results.image = [
    { title: '<img src=x onerror=alert(1)> 우주비행사 사진 (좌우 반전)', link: mirrored, thumbnail: mirrored, sizeheight: '512', sizewidth: '512' },
    { title: '로켓 발사', link: rocket, thumbnail: rocket, sizeheight: '300', sizewidth: '400' },
  ];
  regional.results.blog = [{ title: '우주 블로그', link: gallery, description: '우주비행사 사진 모음' }];
  regional.results.webkr = [{ title: 'javascript 링크 문서', link: 'javascript:alert(1)', description: '열면 안 되는 주소' }];
  search.results.image = [imageSearchItem('Astronaut poster', copy, gallery)];
  search.results.web = [webSearchItem('Astronaut gallery', gallery, copy)];
  // The summary cites the first two evidence items of its prompt, the way the real model is asked to.
  llm.answer = (prompt) => {
    const ids = [...prompt.matchAll(/"id":"(ev_[a-z0-9]+)"/g)].map((m) => m[1]).slice(0, 2);
    return ids.length ? `두 근거 ${ids.map((id) => `[${id}]`).join(' ')}가 같은 사진을 가리킵니다.` : '인용할 근거가 없습니다.';
  };

  return world;
}
