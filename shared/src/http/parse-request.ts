import type { OpenAPIBackend } from 'openapi-backend';
import { setOwn } from '../own-keys.ts';

type Router = OpenAPIBackend['router'];
type Operation = NonNullable<Parameters<Router['parseRequest']>[1]>;
type RawRequest = { method: string; path: string; query?: unknown; headers: Record<string, unknown>; body?: unknown };

/** A path template's parameters as openapi-backend reads them (bath-es5: `{name}` is `[^/]*`, percent-decoded). */
function pathParameters(template: string): (path: string) => Record<string, string> | null {
  const names = (template.match(/\{[A-Za-z0-9_-]+\}/g) ?? []).map((x) => x.slice(1, -1));
  const pattern = new RegExp(`^${template.replace(/\{[A-Za-z0-9_-]+\}/g, '([^\\/]*)')}$`);
  return (path) => {
    const m = pattern.exec(path);
    if (m === null) return null;
    const values = m.slice(1).map((v) => decodeURIComponent(v));
    const params: Record<string, string> = {};
    for (let i = 0; i < names.length; i++) {
      const name = names[i]!;
      // A name used twice must have one value.
      if (name in params && params[name] !== values[i]) return null;
      params[name] = values[i]!;
    }
    return params;
  };
}

const isEmptyQuery = (query: unknown) => query === '' || (typeof query === 'object' && query !== null && Object.keys(query).length === 0);

/**
 * openapi-backend parses a request up to four times on its way (routing, the matched operation,
 * validation, the coerced values), each time lower-casing every header, parsing cookies and the
 * query and compiling the operation's path template anew. Here the common request (no cookie, no
 * query string, a body that is already a value) is parsed to the same result with the template
 * compiled once per operation; any other request goes through openapi-backend's own parsing.
 */
export function fastParseRequest(router: Router): void {
  const original = router.parseRequest.bind(router);
  const templates = new Map<string, (path: string) => Record<string, string> | null>();
  router.parseRequest = ((req: RawRequest, operation?: Operation) => {
    if (req.headers.cookie !== undefined || !isEmptyQuery(req.query) || (req.body && typeof req.body !== 'object')) {
      return original(req as never, operation);
    }
    const headers: Record<string, unknown> = {};
    // Header names are the client's: a header named __proto__ is kept as a header, not taken as the object's prototype.
    for (const name of Object.keys(req.headers)) setOwn(headers, name.toLowerCase(), req.headers[name]);
    let path = req.path?.trim() || '';
    if (!path.startsWith('/')) path = `/${path}`;
    path = path.split('?')[0]!;
    let params: Record<string, string> = {};
    if (operation) {
      let parse = templates.get(operation.path);
      if (!parse) templates.set(operation.path, (parse = pathParameters(operation.path)));
      params = parse(path.trim()) ?? {};
    }
    return { ...req, path, method: req.method.trim().toLowerCase(), params, headers, query: {}, cookies: Object.create(null) as object, requestBody: req.body };
  }) as Router['parseRequest'];
}
