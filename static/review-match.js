// How an evidence copy matched the submission, in the operator's words, and the matched region
// outlined over an image.
import { h, percent } from './dom.js';

/**
 * How a copy matched, in the operator's words. The names come from lib/images/robust.ts (an
 * orientation, then `trimmed`, `tilt` or `crop`) and lib/enrichment/verify.ts (`geometric`, confirmed by
 * local features); an unknown name is shown as it is stored.
 */
const ORIENTATION_NAME = {
  hflip: '좌우 반전',
  vflip: '상하 반전',
  rot180: '180° 회전',
  rot90: '90° 회전',
  rot270: '270° 회전',
  transpose: '대각선 대칭',
  transverse: '반대 대각선 대칭',
};
const REGION_STEP_NAME = { trimmed: '테두리 제거', tilt: '기울기 보정', crop: '잘라낸 부분', geometric: '영역 일치' };

/**
 * The badge name, the similarity that decided the match (named after the transform it was measured
 * under) and the matched region of each image, when it is well formed.
 */
export function matchHow(ev) {
  const region = readRegion(ev.match_region);
  const inliers = Number.isInteger(ev.match_inliers) && ev.match_inliers >= 0 ? ev.match_inliers : null;
  const deciding = typeof ev.match_similarity === 'number' && Number.isFinite(ev.match_similarity) ? percent(ev.match_similarity) : null;
  const transform = readTransform(ev.match_transform);
  if (!transform) return { name: ev.match_transform ?? null, decided: null, region };
  const { orientation, step } = transform;
  const turned = ORIENTATION_NAME[orientation];
  // The picture as it stands: the pHash line already says it all, as before.
  if (!turned && !step) return { name: '원본 그대로', decided: null, region };
  const name = [turned, REGION_STEP_NAME[step]].filter(Boolean).join(' · ');
  // In a crop or a collage the region is a part of one picture only: that picture's share says how much matched.
  const area = region
    ? region.candidate.coverage < region.submission.coverage
      ? `근거 이미지 면적의 ${percent(region.candidate.coverage)}`
      : `제출 이미지 면적의 ${percent(region.submission.coverage)}`
    : null;
  let phrase;
  if (step === 'geometric') phrase = `${turned ? `${turned} 후 ` : ''}영역 일치`;
  else if (step === 'crop') phrase = deciding && `${turned ? `${turned} 후 ` : ''}잘라낸 부분 ${deciding}`;
  else if (step === 'trimmed') phrase = deciding && `${turned ? `${turned} · ` : ''}테두리 제거 후 ${deciding}`;
  else if (step === 'tilt') phrase = deciding && `${turned ? `${turned} · ` : ''}기울기 보정 후 ${deciding}`;
  else phrase = deciding && `${turned} 후 ${deciding}`;
  const parts = [
    phrase ? h('span', { class: 'deciding-similarity' }, phrase) : null,
    area ? h('span', { class: 'match-area' }, area) : null,
    inliers !== null ? h('span', { class: 'match-inliers' }, `특징점 ${inliers}개 일치`) : null,
    step === 'geometric' && deciding ? h('span', { class: 'match-agreement' }, `영역 화소 일치도 ${deciding}`) : null,
  ].filter(Boolean);
  const decided = parts.length ? parts.flatMap((part, i) => (i ? [' · ', part] : [part])) : null;
  return { name, decided, region };
}

/** `hflip+crop` -> { orientation: 'hflip', step: 'crop' }; null for a name the console does not know. */
function readTransform(value) {
  if (typeof value !== 'string') return null;
  if (value === 'identity') return { orientation: null, step: null };
  const parts = value.split('+');
  const orientation = Object.hasOwn(ORIENTATION_NAME, parts[0]) ? parts.shift() : null;
  const step = parts.length === 1 && Object.hasOwn(REGION_STEP_NAME, parts[0]) ? parts.shift() : null;
  return parts.length === 0 && (orientation || step) ? { orientation, step } : null;
}

/**
 * The stored match_region with every corner clamped into the image, or null when either side is
 * not 3 to 8 numeric corners and a numeric coverage (it is stored data, shown without a fuss).
 */
function readRegion(region) {
  const clamp = (n) => Math.min(1, Math.max(0, n));
  const area = (side) => {
    if (!side || !Array.isArray(side.quad) || side.quad.length < 3 || side.quad.length > 8) return null;
    if (typeof side.coverage !== 'number' || !Number.isFinite(side.coverage)) return null;
    const corner = (p) => (Array.isArray(p) && p.length === 2 && p.every((n) => typeof n === 'number' && Number.isFinite(n)) ? p.map(clamp) : null);
    const quad = side.quad.map(corner);
    return quad.includes(null) ? null : { quad, coverage: clamp(side.coverage) };
  };
  const submission = area(region?.submission);
  const candidate = area(region?.candidate);
  return submission && candidate ? { submission, candidate } : null;
}

const SVG = 'http://www.w3.org/2000/svg';

/**
 * The image with the matched region outlined over it. The SVG covers the image's element box and
 * its viewBox is the image's own pixel size, so `meet` scales and centres it exactly as
 * `object-fit: contain` does the picture; it is drawn once the image has loaded and knows that size.
 */
export function outlined(img, area) {
  if (!area || img.tagName !== 'IMG') return img;
  const label = '일치 영역';
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('class', 'match-region');
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', label);
  svg.setAttribute('preserveAspectRatio', 'xMidYMid meet');
  const title = document.createElementNS(SVG, 'title');
  title.textContent = label;
  svg.append(title);
  const draw = () => {
    const [width, height] = [img.naturalWidth, img.naturalHeight];
    if (!width || !height) return;
    svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
    const polygon = document.createElementNS(SVG, 'polygon');
    polygon.setAttribute('points', area.quad.map(([x, y]) => `${x * width},${y * height}`).join(' '));
    svg.append(polygon);
  };
  if (img.complete && img.naturalWidth) draw();
  else img.addEventListener('load', draw, { once: true });
  img.addEventListener('error', () => svg.remove(), { once: true });
  return h('span', { class: 'match-frame' }, img, svg);
}
