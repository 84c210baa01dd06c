import type { OpenAPIBackend } from 'openapi-backend';

type Operation = ReturnType<OpenAPIBackend['router']['getOperations']>[number];

const escape = (s: string) => s.replace(/[.*+?^$()|[\]\\]/g, '\\$&');

/** The operation of a method on a path, or whether the path exists with other methods only (405). */
type Match = { operation?: Operation; otherMethods: boolean };

export type Routes = {
  /**
   * The interface shows some paths with a trailing slash and some without, and clients use both:
   * the form of `path` that the contract has. The route it found is the one openapi-backend's
   * router answers for that path next, without matching again.
   */
  contractPath: (method: string, path: string) => string;
};

/**
 * openapi-backend rebuilds its list of operations and a regular expression per path on every
 * request (measured: a third of the CPU of a GET). The contract does not change while a service
 * runs, so build both once and match with the same rules: an exact path first, then templates
 * ordered by specificity; a path that exists with other methods is a 405. Templates are grouped
 * by their number of segments, so a path is tested only against those that can match it.
 */
export function precompileRoutes(api: OpenAPIBackend): Routes {
  const router = api.router;
  const operations = router.getOperations();
  const exact = new Map<string, Operation[]>();
  for (const op of operations) exact.set(op.path, [...(exact.get(op.path) ?? []), op]);
  const segments = (path: string) => path.split('/').length;
  const bySegments = new Map<number, { op: Operation; pattern: RegExp; specificity: number }[]>();
  for (const op of operations.filter((o) => o.path.includes('{'))) {
    const pattern = new RegExp(
      `^${op.path
        .split(/\{[^}]+\}/)
        .map(escape)
        .join('[^/]+')}$`,
    );
    const group = bySegments.get(segments(op.path)) ?? [];
    group.push({ op, pattern, specificity: op.path.replace(/\{.*?\}/g, '').length });
    bySegments.set(segments(op.path), group);
  }
  for (const group of bySegments.values()) group.sort((a, b) => b.specificity - a.specificity);

  const match = (method: string, path: string): Match => {
    const byPath = exact.get(path);
    const found = byPath?.find((op) => op.method === method);
    if (found) return { operation: found, otherMethods: false };
    let otherMethods = (byPath?.length ?? 0) > 0;
    for (const t of bySegments.get(segments(path)) ?? []) {
      if (!t.pattern.test(path)) continue;
      if (t.op.method === method) return { operation: t.op, otherMethods: false };
      otherMethods = true;
    }
    return { otherMethods };
  };

  // The route contractPath found, for the call of matchOperation that follows it in the same tick.
  let last: { method: string; path: string; operation: Operation } | undefined;

  router.getOperations = () => operations;
  router.matchOperation = ((req: { method: string; path: string }, strict?: boolean) => {
    const method = req.method.toLowerCase();
    const path = req.path.split('?')[0]!;
    const remembered = last;
    last = undefined;
    if (remembered && remembered.method === method && remembered.path === path) return remembered.operation;
    const { operation, otherMethods } = match(method, path);
    if (operation) return operation;
    if (!strict) return undefined;
    if (otherMethods) throw new Error('405-methodNotAllowed: this method is not registered for the route');
    throw new Error('404-notFound: no route matches request');
  }) as typeof router.matchOperation;

  return {
    contractPath: (method, path) => {
      const lower = method.toLowerCase();
      const toggled = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : `${path}/`;
      let otherMethod: string | undefined;
      for (const candidate of [path, toggled]) {
        const { operation, otherMethods } = match(lower, candidate);
        if (operation) {
          last = { method: lower, path: candidate, operation };
          return candidate;
        }
        if (otherMethods) otherMethod ??= candidate;
      }
      return otherMethod ?? path;
    },
  };
}
