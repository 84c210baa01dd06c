import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import express, { type Request, type Response } from 'express';
import { chooseCoding, compressWith, contractPath, type ContentCoding, type ContractName } from '@platform/shared';

/**
 * The API reference at `/docs/`: both contracts rendered by Redoc's standalone bundle, every byte
 * served from here (docs/adr/0035-api-reference-pages.md). The pages' Content-Security-Policy lets
 * them load nothing from another origin, so a reader's browser makes no request off the service.
 */

const CONTRACTS: Record<ContractName, { title: string; summary: string }> = {
  management: { title: 'Management interface', summary: 'Users, portfolios, versions, the query language, optimizations, funding, events.' },
  data: { title: 'Data interface', summary: 'Reference data (JSON or Arrow), custom fields, inspirations, smart search, X-Ray, simulations.' },
};

const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  // Redoc (styled-components) writes its styles into <style> elements.
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  // Redoc's search index runs in a worker it starts from a blob.
  'worker-src blob:',
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const esc = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const layout = (title: string, body: string, head = '') => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title>
${head}</head>
${body}
</html>
`;

const INDEX_STYLE = `<style>
body { font: 16px/1.5 system-ui, sans-serif; margin: 2rem auto; max-width: 44rem; padding: 0 1rem; color: #1b1b1b; }
a { color: #0b57d0; } a:focus-visible { outline: 3px solid #0b57d0; outline-offset: 2px; }
li { margin: 0.75rem 0; } code { background: #f1f3f4; padding: 0 0.25rem; }
</style>
`;

export function indexPage(): string {
  const items = (Object.keys(CONTRACTS) as ContractName[])
    .map(
      (name) =>
        `<li><a href="/docs/${name}">${esc(CONTRACTS[name].title)}</a>: ${esc(CONTRACTS[name].summary)} ` +
        `(contract: <a href="/docs/${name}.openapi.yaml"><code>${name}.openapi.yaml</code></a>)</li>`,
    )
    .join('\n');
  return layout(
    'API reference',
    `<body>
<main>
<h1>API reference</h1>
<p>The two interfaces of the platform, rendered from their OpenAPI contracts.</p>
<ul>
${items}
</ul>
<p>The typed client for integrators is the workspace package <code>@platform/client</code> (clients/README.md). The administration console is at <a href="/console/">/console/</a>.</p>
</main>
</body>`,
    INDEX_STYLE,
  );
}

export function referencePage(name: ContractName): string {
  return layout(
    `${CONTRACTS[name].title} – API reference`,
    `<body style="margin:0">
<noscript>The reference needs JavaScript; the contract itself is at <a href="/docs/${name}.openapi.yaml">/docs/${name}.openapi.yaml</a>.</noscript>
<div id="redoc" data-spec="/docs/${name}.openapi.yaml"></div>
<script src="/docs/assets/redoc.standalone.js"></script>
<script src="/docs/assets/init.js"></script>
</body>`,
  );
}

/** Starts Redoc on the page's element with the contract its data-spec names (a file, so no inline script is needed). */
const INIT_SCRIPT = `(function () {
  var element = document.getElementById('redoc');
  Redoc.init(element.getAttribute('data-spec'), { hideDownloadButton: false, expandResponses: '200,201', pathInMiddlePanel: true, jsonSampleExpandLevel: 3 }, element);
})();
`;

type Asset = { type: string; load: () => Promise<Buffer> };

// Compiled, the build has put Redoc's bundle beside this module (production installs no Redoc);
// from the sources, it is read from the redoc package, a development dependency.
const redocBeside = fileURLToPath(new URL('./redoc.standalone.js', import.meta.url));
const redocBundle = () => (existsSync(redocBeside) ? redocBeside : createRequire(import.meta.url).resolve('redoc/bundles/redoc.standalone.js'));

const ASSETS: Record<string, Asset> = {
  '/docs/assets/redoc.standalone.js': { type: 'text/javascript; charset=utf-8', load: () => readFile(redocBundle()) },
  '/docs/assets/init.js': { type: 'text/javascript; charset=utf-8', load: async () => Buffer.from(INIT_SCRIPT) },
  '/docs/management.openapi.yaml': { type: 'application/yaml; charset=utf-8', load: () => readFile(contractPath('management')) },
  '/docs/data.openapi.yaml': { type: 'application/yaml; charset=utf-8', load: () => readFile(contractPath('data')) },
};

/** Each asset read once and compressed once per coding, on first request. */
function assetCache() {
  const cache = new Map<string, Promise<Buffer>>();
  const get = (path: string, coding: ContentCoding | undefined): Promise<Buffer> => {
    const key = `${path} ${coding ?? 'identity'}`;
    let entry = cache.get(key);
    if (!entry) {
      entry = coding ? get(path, undefined).then((plain) => compressWith(coding, plain)) : ASSETS[path]!.load();
      // A failed read is not kept: the next request tries again.
      entry.catch(() => cache.delete(key));
      cache.set(key, entry);
    }
    return entry;
  };
  return get;
}

const send = (res: Response, status: number, type: string, body: Buffer | string, headers: Record<string, string> = {}) => {
  res.status(status).set({ 'Content-Type': type, 'X-Content-Type-Options': 'nosniff', ...headers });
  res.end(body);
};

/** The `/docs/` pages, their script and the contracts; every other path is passed on to the API at once. */
export function docsPages(): express.RequestHandler {
  const router = express.Router({ strict: true });
  const asset = assetCache();
  const html = (body: string) => (_req: Request, res: Response) =>
    send(res, 200, 'text/html; charset=utf-8', body, { 'Content-Security-Policy': CSP, 'Cache-Control': 'no-cache' });

  router.get('/docs', (_req, res) => res.redirect(301, '/docs/'));
  router.get('/docs/', html(indexPage()));
  for (const name of Object.keys(CONTRACTS) as ContractName[]) router.get(`/docs/${name}`, html(referencePage(name)));
  for (const path of Object.keys(ASSETS)) {
    router.get(path, async (req, res, next) => {
      try {
        const coding = chooseCoding(req.get('accept-encoding'));
        const body = await asset(path, coding);
        send(res, 200, ASSETS[path]!.type, body, {
          'Cache-Control': 'public, max-age=300',
          Vary: 'Accept-Encoding',
          ...(coding ? { 'Content-Encoding': coding } : {}),
        });
      } catch (error) {
        next(error);
      }
    });
  }
  return (req, res, next) => (req.path === '/docs' || req.path.startsWith('/docs/') ? router(req, res, next) : next());
}
