import type { Middleware } from 'openapi-fetch';
import { UnexpectedResponse, problemOf } from './problem.ts';

/**
 * Turns every failed answer into an exception: an ApiProblem for problem+json, an
 * UnexpectedResponse otherwise. A call then resolves only with a success, whose `data` is typed.
 */
export const throwProblems: Middleware = {
  async onResponse({ request, response }) {
    if (response.ok) return undefined;
    const problem = await problemOf(response, request.method);
    if (problem) throw problem;
    throw new UnexpectedResponse(response.status, `${request.method} ${new URL(request.url).pathname}`, await response.clone().text());
  },
};
