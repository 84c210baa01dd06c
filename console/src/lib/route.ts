/** The console's pages live in the URL's fragment (`#/entity/P01…?parent=…`): no server route is needed. Pure. */
export type Route = { page: string; id?: string; params: URLSearchParams };

export function parseHash(hash: string): Route {
  const text = hash.replace(/^#\/?/, '');
  const mark = text.indexOf('?');
  const path = mark >= 0 ? text.slice(0, mark) : text;
  const params = new URLSearchParams(mark >= 0 ? text.slice(mark + 1) : '');
  const [page, id] = path.split('/').map((part) => decodeURIComponent(part));
  return { page: page || 'search', id: id || undefined, params };
}

export function href(page: string, id?: string, params?: Record<string, string | undefined>): string {
  const query = new URLSearchParams(Object.entries(params ?? {}).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== ''));
  const tail = query.toString();
  return `#/${page}${id ? `/${encodeURIComponent(id)}` : ''}${tail ? `?${tail}` : ''}`;
}
