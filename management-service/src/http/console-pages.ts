import { existsSync } from 'node:fs';
import { join } from 'node:path';
import express, { type NextFunction, type Request, type Response } from 'express';
import { ProblemError } from '@platform/shared';

export type ConsolePagesOptions = {
  /** The built console (`console/dist`, CONSOLE_DIR). */
  dir: string;
  /** The data service's URL as the browser reaches it (CONSOLE_DATA_SERVICE_URL); none: no data pages. */
  dataServiceUrl?: string;
};

/**
 * The administration console at /console/ (docs/adr/0036-administration-console.md): the files
 * Vite built, and /console/config.json telling the page where the data service answers. The page
 * calls only the public interfaces; nothing here reads the database. A missing build is a 503
 * saying which command builds it.
 */
export function consolePages(options: ConsolePagesOptions): express.Router {
  const dataOrigin = options.dataServiceUrl ? new URL(options.dataServiceUrl).origin : undefined;
  // Everything the page loads comes from this origin; it talks to this service and the data service only.
  const policy = [
    "default-src 'self'",
    `connect-src 'self'${dataOrigin ? ` ${dataOrigin}` : ''}`,
    "img-src 'self' data:",
    "style-src 'self'",
    "script-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
  const config = JSON.stringify({ data_service_url: options.dataServiceUrl ?? null, docs_url: '/docs/' });
  const files = express.static(options.dir, {
    index: 'index.html',
    redirect: false,
    fallthrough: true,
    // Vite names each asset by its content's hash: it never changes under its name. The page itself
    // is checked on every load so that a new build is taken at once.
    setHeaders: (res, path) => res.setHeader('Cache-Control', path.includes('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache'),
  });

  const router = express.Router({ strict: true });
  router.use('/console', (_req: Request, res: Response, next: NextFunction) => {
    res.setHeader('Content-Security-Policy', policy);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    next();
  });
  router.get('/console', (_req, res) => res.redirect(301, '/console/'));
  router.get('/console/config.json', (_req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    res.type('application/json').send(config);
  });
  router.use('/console', (_req: Request, _res: Response, next: NextFunction) => {
    if (existsSync(join(options.dir, 'index.html'))) return next();
    next(
      new ProblemError(503, 'unavailable', 'The console is not built: run `npm run build:console` (npm ci runs it), or set CONSOLE_DIR to a built console.'),
    );
  });
  router.use('/console', files);
  router.use('/console', (_req: Request, _res: Response, next: NextFunction) => {
    next(new ProblemError(404, 'not_found', 'No such file of the console; its pages are at /console/.'));
  });
  return router;
}
