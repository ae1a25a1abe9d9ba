// The review page's figure: the submitted image with the face boxes and the person boxes over it,
// each kind in its own colour with its own toggle.
import { h, append, image, clear } from './dom.js';

/** The figure of submission `s`; the boxes are drawn once the picture's pixel size is known. */
export function reviewFigure(s) {
  const img = image(s.media_url, `제출 이미지: ${s.title ?? s.id}`, { class: 'review-image', loading: 'eager' });
  // People under faces: a person box usually holds a face box, which stays on top and readable.
  const layers = [boxLayer('person', s.people), boxLayer('face', s.faces)];
  const drawBoxes = (width, height) => {
    for (const layer of layers) layer.draw(width, height);
  };
  if (s.width && s.height) drawBoxes(s.width, s.height);
  else if (img.tagName === 'IMG') img.addEventListener('load', () => drawBoxes(img.naturalWidth, img.naturalHeight), { once: true });
  const frame = h(
    'div',
    { class: 'figure-frame' },
    img,
    layers.map((layer) => layer.overlay),
  );
  return h(
    'figure',
    { class: 'panel review-figure' },
    frame,
    h(
      'figcaption',
      { class: 'box-legend' },
      [...layers].reverse().map((layer) => h('div', {}, layer.caption)),
    ),
  );
}

/**
 * The two kinds of boxes drawn over the review image, each in its own colour with its own toggle;
 * `face` keeps the class names and toggle id the console has always had.
 */
const BOX_KINDS = {
  face: {
    toggleId: 'toggle-faces',
    name: '얼굴',
    shown: (n) => ` 얼굴 영역 ${n}개 표시 (face boxes)`,
    none: '감지된 얼굴 없음 (no faces)',
  },
  person: {
    toggleId: 'toggle-people',
    name: '인물',
    shown: (n) => ` 인물 영역 ${n}개 표시 (person boxes)`,
    none: '감지된 인물 없음 (no people)',
    // A person box names the face found inside it (`face` is its index in `faces`).
    note: (item) => (Number.isInteger(item.face) ? ` · 얼굴 ${item.face + 1}` : ''),
  },
};

/**
 * One kind of box as an overlay over the image, drawn once the image's pixel size is known, and
 * the caption line that toggles it (with a colour swatch as its legend) or says there are none.
 */
function boxLayer(kind, list) {
  const spec = BOX_KINDS[kind];
  const items = Array.isArray(list) ? list : [];
  const overlay = h('div', { class: ['box-overlay', `${kind}-overlay`], 'aria-hidden': 'true', dataset: { boxes: kind } });
  const draw = (width, height) => {
    clear(overlay);
    if (!width || !height) return;
    items.forEach((item, i) => {
      const box = item.box ?? {};
      const score = typeof item.score === 'number' ? ` · ${item.score.toFixed(2)}` : '';
      const el = h('div', { class: `${kind}-box` }, h('span', { class: `${kind}-label` }, `${spec.name} ${i + 1}${score}${spec.note?.(item) ?? ''}`));
      // Percentages of the image's own pixel size keep the boxes in place at any displayed size.
      el.style.left = `${(box.x / width) * 100}%`;
      el.style.top = `${(box.y / height) * 100}%`;
      el.style.width = `${(box.width / width) * 100}%`;
      el.style.height = `${(box.height / height) * 100}%`;
      append(overlay, el);
    });
  };
  if (!items.length) return { overlay, draw, caption: h('span', { class: ['muted', `no-${kind}-boxes`] }, spec.none) };
  const toggle = h('input', { type: 'checkbox', id: spec.toggleId, checked: true });
  toggle.addEventListener('change', () => overlay.classList.toggle('hidden', !toggle.checked));
  const caption = h(
    'label',
    { for: spec.toggleId, class: 'inline-check' },
    toggle,
    h('span', { class: ['legend-swatch', `swatch-${kind}`], 'aria-hidden': 'true' }),
    spec.shown(items.length),
  );
  return { overlay, draw, caption };
}
