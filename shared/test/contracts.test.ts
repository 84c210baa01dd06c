import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { generateTypes, generatedDir, relativeToRoot } from '../tools/generate-types.ts';
import { loadContract } from '../src/http/contract.ts';
import { openApiBackend } from '../src/http/contract-routing.ts';
import { streams, subjects } from '../src/nats.ts';

const read = async (name: string) => parse(await readFile(new URL(`../../contracts/${name}`, import.meta.url), 'utf8'));

/** Every endpoint the interface document names, as method and path. */
const interfaceEndpoints = {
  management: [
    'post /users/',
    'get /users/',
    'get /users/{user_id}',
    'patch /users/{user_id}',
    'delete /users/{user_id}',
    'post /portfolios/',
    'get /portfolios/',
    'get /portfolios/{portfolio_id}',
    'patch /portfolios/{portfolio_id}',
    'delete /portfolios/{portfolio_id}',
    'get /instrument_groups/',
    'post /events/deposit/',
    'post /events/withdraw/',
    'get /events/',
    'get /suitability-profiler/profiles/{profile_id}',
  ],
  data: [
    'post /data/reference/query/',
    'get /data/reference/universe/',
    'get /inspiration/',
    'get /inspiration/definition/',
    'post /smart-search/',
    'get /xray/universe/',
    'post /performance/future/',
  ],
};

const normalise = (path: string) => (path.length > 1 ? path.replace(/\/$/, '') : path);

describe('contracts', function () {
  this.timeout(120_000);

  it('validate as OpenAPI 3.1 and describe every endpoint of the interface', async () => {
    for (const name of ['management', 'data'] as const) {
      const document = await loadContract(name);
      const present = new Set(Object.entries(document.paths ?? {}).flatMap(([path, item]) => Object.keys(item ?? {}).map((m) => `${m} ${normalise(path)}`)));
      for (const endpoint of interfaceEndpoints[name]) {
        const [method, path] = endpoint.split(' ') as [string, string];
        assert.ok(present.has(`${method} ${normalise(path)}`), `${name} contract lacks ${endpoint}`);
      }
    }
  });

  it('compile a request validator for every operation (validators are built lazily at run time)', async () => {
    for (const name of ['management', 'data'] as const) {
      const api = openApiBackend(await loadContract(name));
      await api.init();
      for (const operation of api.router.getOperations()) {
        assert.doesNotThrow(() => api.validator.getRequestValidatorsForOperation(operation.operationId!), `${name}: ${operation.operationId}`);
      }
    }
  });

  it('give every operation an operationId', async () => {
    for (const name of ['management', 'data'] as const) {
      const document = await loadContract(name);
      for (const [path, item] of Object.entries(document.paths ?? {})) {
        for (const [method, operation] of Object.entries(item ?? {})) {
          if (typeof operation === 'object' && operation && 'responses' in operation) {
            assert.match(String((operation as { operationId?: string }).operationId), /^[a-z][A-Za-z]+$/, `${method} ${path}`);
          }
        }
      }
    }
  });

  it('take every PATCH body as application/merge-patch+json and application/json, with one schema', async () => {
    const document = await read('management.openapi.yaml');
    let patches = 0;
    for (const [path, item] of Object.entries(document.paths as Record<string, { patch?: { requestBody: { content: Record<string, unknown> } } }>)) {
      if (!item.patch) continue;
      patches++;
      const content = item.patch.requestBody.content;
      assert.deepEqual(Object.keys(content).sort(), ['application/json', 'application/merge-patch+json'], `PATCH ${path}`);
      assert.deepEqual(content['application/merge-patch+json'], content['application/json'], `PATCH ${path}`);
    }
    assert.ok(patches >= 10, `${patches} PATCH operations`);
  });

  it('list each path in one form only: the other (trailing slash toggled) is served as its alias', async () => {
    for (const name of ['management', 'data'] as const) {
      const paths = Object.keys((await loadContract(name)).paths ?? {});
      const forms = new Map<string, string>();
      for (const path of paths) {
        const other = forms.get(normalise(path));
        assert.equal(other, undefined, `${name}: ${path} and ${other} are one path; list one form only`);
        forms.set(normalise(path), path);
      }
    }
  });

  it('share one ErrorCode enum, the one contracts/README.md documents', async () => {
    const management = (await read('management.openapi.yaml')).components.schemas.ErrorCode.enum as string[];
    const data = (await read('data.openapi.yaml')).components.schemas.ErrorCode.enum as string[];
    const readme = await readFile(new URL('../../contracts/README.md', import.meta.url), 'utf8');
    const documented = [...readme.matchAll(/^\| `([a-z_]+)` \| \d{3} \|/gm)].map((m) => m[1]);
    assert.deepEqual([...management].sort(), [...documented].sort());
    assert.deepEqual([...data].sort(), [...documented].sort());
  });

  it('name the NATS subjects the services use, inside the streams that hold them', async () => {
    const channels = (await read('events.asyncapi.yaml')).channels as Record<string, { address: string }>;
    assert.equal(channels.tenantEvents!.address.replace('{tenant}', 'acme'), subjects.tenantEvents('acme'));
    assert.equal(channels.optimizerRequests!.address.replace('{tenant}', 'acme'), subjects.optimizerRequests('acme'));
    assert.equal(channels.optimizerResults!.address, subjects.optimizerResults);
    const covered = (subject: string) =>
      Object.values(streams).some((s) =>
        s.subjects.some((p) => new RegExp(`^${p.replace(/\./g, '\\.').replace('*', '[^.]+').replace('>', '.+')}$`).test(subject)),
      );
    for (const subject of [subjects.tenantEvents('acme'), subjects.optimizerRequests('acme'), subjects.optimizerResults]) assert.ok(covered(subject), subject);
  });

  it('pass spectral (oas and asyncapi rulesets) with zero errors', async () => {
    const spectral = new URL('../../node_modules/.bin/spectral', import.meta.url).pathname;
    const files = ['management.openapi.yaml', 'data.openapi.yaml', 'events.asyncapi.yaml'].map((f) => `contracts/${f}`);
    const root = new URL('../../', import.meta.url).pathname;
    const { stdout } = await promisify(execFile)(spectral, ['lint', '--ruleset', '.spectral.yaml', '--fail-severity', 'error', '--format', 'json', ...files], {
      cwd: root,
      maxBuffer: 64 * 1024 * 1024,
    }).catch((e) => {
      throw new Error(`spectral found errors:\n${e.stdout?.slice(0, 4000)}`);
    });
    const results = JSON.parse(stdout.slice(stdout.indexOf('['))) as { severity: number }[];
    assert.equal(results.filter((r) => r.severity === 0).length, 0);
  });

  it('match the committed generated types (run `npm run generate` when this fails)', async () => {
    for (const [path, expected] of Object.entries(await generateTypes())) {
      const committed = await readFile(path, 'utf8').catch(() => '');
      assert.ok(committed === expected, `${relativeToRoot(path)} is stale: run npm run generate and commit it`);
    }
  });

  it('are the only files of the generated package (a file the generator no longer writes would be stale)', async () => {
    const written = Object.keys(await generateTypes())
      .map(relativeToRoot)
      .sort();
    const present = (await readdir(generatedDir)).map((name) => relativeToRoot(`${generatedDir}${name}`)).sort();
    assert.deepEqual(present, written);
  });
});
