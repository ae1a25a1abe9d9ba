import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { openApiDocument, openApiPath } from '../../lib/api/openapi.js';
import { ROUTES } from '../../functions/index.js';

/**
 * Every answer the test suite receives through `createTestEnv().call` is checked against the
 * OpenAPI document the service serves: a 2xx JSON answer against its route's record, any other
 * JSON answer against the error shape. A field the document does not describe, or describes
 * otherwise, fails the test that received it.
 */
export const document = openApiDocument(ROUTES, 'test');
const ajv = new Ajv2020({ strict: false, allErrors: true });
// zod names a startsWith check as format `starts_with` beside the pattern that enforces it.
ajv.addFormat('starts_with', true);
const validators = new Map<string, ValidateFunction>();
const validator = (name: string) => {
  let validate = validators.get(name);
  if (!validate) {
    validate = ajv.compile(document.components.schemas[name]);
    validators.set(name, validate);
  }
  return validate;
};

const matchers = ROUTES.map((route) => ({
  route,
  pattern: new RegExp(
    `^${openApiPath(route.path)
      .replace(/\{path\}$/, '.+')
      .replace(/\{[a-z_]+\}/g, '[^/]+')}$`,
  ),
}));

export async function checkAnswer(method: string, path: string, response: Response): Promise<void> {
  if (!(response.headers.get('content-type') ?? '').startsWith('application/json')) return;
  const pathname = new URL(path, 'http://127.0.0.1').pathname;
  const route = matchers.find((m) => m.route.method === method.toLowerCase() && m.pattern.test(pathname))?.route;
  const ok = response.status >= 200 && response.status < 300;
  if (ok && !route?.answer) return;
  const name = ok ? route!.answer!.name : (route?.otherAnswers?.[response.status]?.name ?? 'Error');
  if (ok && response.status !== (route!.status ?? 200)) {
    throw new Error(`${method} ${path} answered ${response.status}; the OpenAPI document says ${route!.status ?? 200}`);
  }
  const validate = validator(name);
  const body: unknown = await response.clone().json();
  if (!validate(body)) {
    throw new Error(`${method} ${path} (${response.status}) does not match the OpenAPI schema ${name}: ${ajv.errorsText(validate.errors)}`);
  }
}
