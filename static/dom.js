// Every value from the API is untrusted (titles and descriptions come from the open web), so the
// console builds DOM nodes only through these helpers: text goes in as text nodes, and URLs reach
// `href`/`src` only through `externalLink`, `hashLink` and `image`, which check the scheme first.

const URL_ATTRIBUTES = new Set(['href', 'src', 'srcset', 'action', 'formaction', 'xlink:href']);

/**
 * Creates an element. `props`: `class`, `text`, `dataset`, `on` ({event: handler}), boolean or
 * string attributes. Children are nodes or values shown as text; null/undefined/false are skipped.
 */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') el.className = Array.isArray(value) ? value.filter(Boolean).join(' ') : value;
    else if (key === 'text') el.textContent = String(value);
    else if (key === 'dataset') Object.assign(el.dataset, value);
    else if (key === 'on') for (const [event, fn] of Object.entries(value)) el.addEventListener(event, fn);
    else if (key.startsWith('on') || URL_ATTRIBUTES.has(key.toLowerCase())) {
      throw new Error(`h(): ${key} must be set through a safe helper`);
    } else if (value === true) el.setAttribute(key, '');
    else el.setAttribute(key, String(value));
  }
  return append(el, ...children);
}

/** Appends nodes and text; arrays are flattened and null/undefined/false skipped. */
export function append(parent, ...children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    parent.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return parent;
}

/** Empties an element, then appends `children` as `append` does. */
export function clear(el, ...children) {
  el.replaceChildren();
  return append(el, ...children);
}

/** An absolute http(s) URL, or null. */
export function httpUrl(value) {
  if (typeof value !== 'string' || value.trim() === '') return null;
  try {
    const url = new URL(value.trim());
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
  } catch {
    return null;
  }
}

/** A same-origin `/media/...` path or an absolute http(s) URL, or null. */
export function imageUrl(value) {
  if (typeof value !== 'string') return null;
  if (value.startsWith('/media/') && !value.includes('\\')) return value;
  return httpUrl(value);
}

/** A link to the open web; anything not http(s) is shown as plain text instead. */
export function externalLink(url, label, props = {}) {
  const safe = httpUrl(url);
  const text = label === undefined || label === null || label === '' ? String(url ?? '') : String(label);
  if (!safe) return h('span', { class: 'unsafe-url', title: '열 수 없는 주소 (http/https 아님)', text });
  const a = h('a', { ...props, target: '_blank', rel: 'noopener noreferrer' }, text);
  a.href = safe;
  return a;
}

/** A download from the service's own API (`/api/exports/...`): same origin, so the session goes with it. */
export function downloadLink(path, query, label, props = {}) {
  const a = h('a', { class: 'button', download: '', ...props }, label);
  const search = new URLSearchParams(Object.entries(query ?? {}).filter(([, v]) => v !== undefined && v !== null && v !== '')).toString();
  a.href = `/api/exports/${encodeURIComponent(path)}${search ? `?${search}` : ''}`;
  return a;
}

/** A link inside the console (`#/review/<id>` ...); path parts are encoded here. */
export function hashLink(parts, label, props = {}, query) {
  const a = h('a', props, label);
  a.href = routeHref(parts, query);
  return a;
}

export function routeHref(parts, query) {
  const path = parts.map((p) => encodeURIComponent(String(p))).join('/');
  const search = query ? new URLSearchParams(Object.entries(query).filter(([, v]) => v !== undefined && v !== null && v !== '')).toString() : '';
  return `#/${path}${search ? `?${search}` : ''}`;
}

/**
 * An image from `/media/...` or http(s); anything else becomes a placeholder. Remote images are
 * fetched without a referrer so the console's address never reaches third-party hosts.
 */
export function image(src, alt, props = {}) {
  const safe = imageUrl(src);
  if (!safe) return h('div', { class: ['img-missing', props.class], role: 'img', 'aria-label': alt || '이미지 없음' }, '이미지 없음');
  const img = h('img', { loading: 'lazy', decoding: 'async', referrerpolicy: 'no-referrer', alt: alt ?? '', ...props });
  img.addEventListener(
    'error',
    () => {
      img.replaceWith(h('div', { class: ['img-missing', props.class], role: 'img', 'aria-label': alt || '이미지를 불러오지 못함' }, '불러오지 못함'));
    },
    { once: true },
  );
  img.src = safe;
  return img;
}

const timeFormats = new Map();

/** An ISO instant shown in the service's time zone (`limits.SVC_TIMEZONE` when known). */
export function formatInstant(iso, timeZone) {
  if (!iso) return '—';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return String(iso);
  const key = timeZone || '';
  if (!timeFormats.has(key)) {
    const options = { year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' };
    try {
      timeFormats.set(key, new Intl.DateTimeFormat('sv-SE', timeZone ? { ...options, timeZone } : options));
    } catch {
      timeFormats.set(key, new Intl.DateTimeFormat('sv-SE', options));
    }
  }
  return timeFormats.get(key).format(date);
}

export function percent(fraction) {
  if (typeof fraction !== 'number' || !Number.isFinite(fraction)) return '—';
  return `${(fraction * 100).toFixed(1)}%`;
}

export function formatBytes(bytes) {
  if (typeof bytes !== 'number') return '—';
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** A button that disables itself while its async action runs, so a double click sends once. */
export function actionButton(label, action, props = {}) {
  const button = h('button', { type: 'button', ...props }, label);
  button.addEventListener('click', async (event) => {
    if (button.disabled) return;
    button.disabled = true;
    button.setAttribute('aria-busy', 'true');
    try {
      await action(event);
    } finally {
      button.disabled = false;
      button.removeAttribute('aria-busy');
    }
  });
  return button;
}
