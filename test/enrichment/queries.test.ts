import { describe, expect, it } from 'vitest';
import { cleanQueryText, deriveQueryCandidates, hasBrokenEncoding, helperSearchQueries, imageSearchQueries } from '../../lib/enrichment/queries.js';
import type { WebDetection } from '../../lib/providers/global-vision.js';

function detection(parts: { titles?: string[]; entities?: [string, number][]; labels?: string[] } = {}): WebDetection {
  return {
    webEntities: (parts.entities ?? []).map(([description, score]) => ({ entityId: null, score, description })),
    fullMatchingImages: [],
    partialMatchingImages: [],
    pagesWithMatchingImages: (parts.titles ?? []).map((pageTitle, i) => ({
      url: `https://pages.example.org/${i}`,
      pageTitle,
      score: null,
      fullMatchingImages: [],
      partialMatchingImages: [],
    })),
    visuallySimilarImages: [],
    bestGuessLabels: (parts.labels ?? []).map((label) => ({ label, languageCode: 'en' })),
  };
}

const texts = (d: WebDetection, faces: WebDetection[] = []) => deriveQueryCandidates(d, faces).map((c) => c.text);

describe('query derivation', () => {
  it('puts page titles and entities first, taken in turn, entities by score, ahead of the best-guess label', () => {
    const candidates = deriveQueryCandidates(
      detection({
        titles: ['Saturn V launch', 'Apollo 11 mission'],
        entities: [
          ['Kennedy Space Center', 0.3],
          ['Saturn V', 0.9],
        ],
        labels: ['saturn v rocket'],
      }),
    );
    expect(candidates.map((c) => [c.text, c.origin, c.priority])).toEqual([
      ['Saturn V launch', 'page_title', 'high'],
      ['Saturn V', 'entity', 'high'],
      ['Apollo 11 mission', 'page_title', 'high'],
      ['Kennedy Space Center', 'entity', 'high'],
      ['saturn v rocket', 'best_guess', 'low'],
    ]);
  });

  it('uses a best-guess label only when it is specific', () => {
    expect(texts(detection({ labels: ['gentleman'] }))).toEqual([]);
    expect(texts(detection({ labels: ['Buzz Aldrin'] }))).toEqual(['Buzz Aldrin']);
  });

  it('drops generic words such as person, gentleman and portrait from a best-guess label', () => {
    expect(texts(detection({ labels: ['portrait of a gentleman'] }))).toEqual([]);
    expect(texts(detection({ labels: ['person photo'] }))).toEqual([]);
    expect(texts(detection({ labels: ['buzz aldrin portrait'] }))).toEqual(['buzz aldrin']);
  });

  it('drops titles and entities that are only generic words', () => {
    expect(
      texts(
        detection({
          titles: ['Photo', 'Image'],
          entities: [
            ['Person', 0.9],
            ['Stock photography', 0.8],
            ['Gentleman', 0.7],
          ],
        }),
      ),
    ).toEqual([]);
  });

  it('reuses face-region evidence at low priority, after everything else, and only when specific', () => {
    const face = detection({
      titles: ['Portrait', 'Neil Armstrong interview'],
      entities: [
        ['Man', 0.9],
        ['Neil Armstrong', 0.8],
      ],
    });
    const candidates = deriveQueryCandidates(detection({ titles: ['Moon landing'], labels: ['astronaut suit'] }), [face]);
    expect(candidates.map((c) => [c.text, c.origin, c.priority])).toEqual([
      ['Moon landing', 'page_title', 'high'],
      ['astronaut suit', 'best_guess', 'low'],
      ['Neil Armstrong interview', 'face_page_title', 'low'],
      ['Neil Armstrong', 'face_entity', 'low'],
    ]);
  });

  it('appends "image" to an English helper query and "이미지" to a Korean one, never twice', () => {
    const candidates = deriveQueryCandidates(detection({ titles: ['Moon landing', '달 착륙 사진 모음', 'Rocket image gallery', '로켓 이미지'] }));
    expect(helperSearchQueries(candidates, 10)).toEqual(['Moon landing image', '달 착륙 사진 모음 이미지', 'Rocket image gallery', '로켓 이미지']);
    expect(imageSearchQueries(candidates, 10)).toEqual(['Moon landing', '달 착륙 사진 모음', 'Rocket image gallery', '로켓 이미지']);
  });

  it('strips HTML and decodes entities', () => {
    expect(texts(detection({ titles: ['<b>Tom</b> &amp; <i>Jerry</i> &quot;cartoon&quot;'] }))).toEqual(['Tom & Jerry "cartoon"']);
  });

  it('collapses whitespace', () => {
    expect(texts(detection({ titles: ['  Saturn \n\t V   launch  '] }))).toEqual(['Saturn V launch']);
  });

  it('de-duplicates ignoring case', () => {
    expect(texts(detection({ titles: ['Saturn V', 'SATURN V'], entities: [['saturn v', 0.9]], labels: ['Saturn v'] }))).toEqual(['Saturn V']);
  });

  it('never sends text whose encoding is broken (mojibake)', () => {
    expect(hasBrokenEncoding('ì´ë¯¸ì§€')).toBe(true);
    expect(hasBrokenEncoding('CafÃ© terrace')).toBe(true);
    expect(hasBrokenEncoding('Café terrace — “quoted”')).toBe(false);
    expect(hasBrokenEncoding('“CAFÉ” menu, señor')).toBe(false);
    expect(texts(detection({ titles: ['ì´ë¯¸ì§€ ê²€ìƒ‰', 'Café terrace'] }))).toEqual(['Café terrace']);
  });

  it('never sends text with a replacement character', () => {
    expect(texts(detection({ titles: ['Moon \ufffd landing', '占쏙옙 달 착륙'], entities: [['Apollo', 0.5]] }))).toEqual(['Apollo']);
  });

  it('never sends unfilled template placeholders', () => {
    const broken = ['{{title}} - News', 'Photo of ${name}', '%s image', 'Result {0}', 'Item [object Object]'];
    expect(broken.map((text) => cleanQueryText(text))).toEqual([null, null, null, null, null]);
    expect(texts(detection({ titles: [...broken, '100% cotton shirt'] }))).toEqual(['100% cotton shirt']);
  });

  it('applies the query limits given', () => {
    const candidates = deriveQueryCandidates(detection({ titles: ['Alpha one', 'Beta two', 'Gamma three', 'Delta four'] }));
    expect(imageSearchQueries(candidates, 2)).toEqual(['Alpha one', 'Beta two']);
    expect(imageSearchQueries(candidates, 0)).toEqual([]);
    expect(helperSearchQueries(candidates, 3)).toEqual(['Alpha one image', 'Beta two image', 'Gamma three image']);
  });
});
