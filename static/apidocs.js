// API reference: the OpenAPI document the service serves (/api/openapi.json), made readable.
// Nothing here is written by hand: every route, parameter and field comes from the document.
import { h, append, clear } from './dom.js';
import { errorPanel, loading, tableHead } from './ui.js';

const ACCESS_LABEL = { public: '누구나', operator: '운영자', admin: '관리자' };

/** A JSON Schema in one line: `string`, `"승인" | "보류"`, `[submission]`, `{…}`. */
function typeText(schema, components) {
  if (!schema) return '—';
  if (schema.$ref) return schema.$ref.split('/').pop();
  if (schema.enum) return schema.enum.map((v) => JSON.stringify(v)).join(' | ');
  if (schema.anyOf) return schema.anyOf.map((s) => typeText(s, components)).join(' | ');
  if (schema.type === 'array') return `[${typeText(schema.items, components)}]`;
  if (schema.type === 'object' && schema.properties) return `{${Object.keys(schema.properties).join(', ')}}`;
  return Array.isArray(schema.type) ? schema.type.join(' | ') : (schema.type ?? 'any');
}

function fieldTable(schema, components) {
  const properties = schema?.properties ?? {};
  const required = new Set(schema?.required ?? []);
  if (!Object.keys(properties).length) return h('p', { class: 'muted' }, typeText(schema, components));
  return h(
    'table',
    { class: 'table api-fields' },
    tableHead('필드', '형식', '필수'),
    h(
      'tbody',
      {},
      Object.entries(properties).map(([name, field]) =>
        h('tr', {}, h('td', { class: 'mono' }, name), h('td', { class: 'mono' }, typeText(field, components)), h('td', {}, required.has(name) ? '예' : '')),
      ),
    ),
  );
}

function operationCard(path, method, operation, components) {
  const success = Object.entries(operation.responses).find(([status]) => status.startsWith('2'));
  const answer = success?.[1].content?.['application/json']?.schema;
  const record = answer?.$ref ? components.schemas[answer.$ref.split('/').pop()] : null;
  const parameters = operation.parameters ?? [];
  return h(
    'details',
    { class: 'panel api-operation', dataset: { operation: `${method} ${path}` } },
    h(
      'summary',
      {},
      h('span', { class: `badge method method-${method}` }, method.toUpperCase()),
      ' ',
      h('code', { class: 'api-path' }, path),
      ' ',
      h('span', { class: 'muted' }, operation.summary ?? ''),
      ' ',
      h('span', { class: 'badge' }, ACCESS_LABEL[operation['x-access']] ?? operation['x-access']),
    ),
    parameters.length
      ? [
          h('h4', {}, '매개변수'),
          h(
            'table',
            { class: 'table api-fields' },
            tableHead('이름', '위치', '형식'),
            h(
              'tbody',
              {},
              parameters.map((p) =>
                h('tr', {}, h('td', { class: 'mono' }, p.name), h('td', {}, p.in), h('td', { class: 'mono' }, typeText(p.schema, components))),
              ),
            ),
          ),
        ]
      : null,
    operation.requestBody ? [h('h4', {}, '요청 본문 (JSON)'), fieldTable(operation.requestBody.content['application/json'].schema, components)] : null,
    h('h4', {}, `응답 ${success?.[0] ?? ''}${answer?.$ref ? ` · ${answer.$ref.split('/').pop()}` : ''}`),
    record ? fieldTable(record, components) : h('p', { class: 'muted' }, success?.[1].description ?? ''),
    h(
      'p',
      { class: 'muted small' },
      `오류: ${Object.keys(operation.responses)
        .filter((s) => !s.startsWith('2'))
        .join(', ')} — {error: {code, message}}`,
    ),
  );
}

export async function renderApiDocs(view) {
  const slot = h('div', { class: 'api-docs' }, loading());
  // A fixed same-origin address, set as a property as every link in the console is.
  const download = h('a', { download: 'openapi.json', class: 'button' }, 'openapi.json 내려받기');
  download.href = '/api/openapi.json';
  append(view.root, h('div', { class: 'screen-head' }, h('h1', {}, 'API 문서 ', h('span', { class: 'en' }, 'API reference')), download), slot);
  try {
    const response = await fetch('/api/openapi.json', { credentials: 'same-origin' });
    const doc = await response.json();
    if (!view.isCurrent()) return;
    clear(
      slot,
      h('p', { class: 'muted' }, `OpenAPI ${doc.openapi} · ${doc.info.title} ${doc.info.version}`),
      Object.entries(doc.paths).flatMap(([path, methods]) =>
        Object.entries(methods).map(([method, operation]) => operationCard(path, method, operation, doc.components)),
      ),
    );
  } catch (error) {
    clear(
      slot,
      errorPanel(error, () => renderApiDocs(view)),
    );
  }
}
