// `npm run k8s:check`: renders every kustomization under k8s/overlays and validates each object
// offline, with no cluster: Kubernetes' own schemas (the kubernetes-models package) with unknown
// fields refused, the CloudNativePG Cluster and the Prometheus Operator's PodMonitor against the
// schemas vendored in k8s/schemas, and the NATS Helm values for what the platform needs. The
// renderer does the part of kustomize these files use (resources, namespace, labels, images,
// replicas, ConfigMap and Secret generators, patches by kind and name) and refuses any other field,
// so nothing is passed unrendered; it adds no name hashes. A generator file that .gitignore keeps out of the repository (the dev signing
// key) is rendered from a stand-in.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { Ajv } from 'ajv';
import { parseAllDocuments, parse as parseYaml } from 'yaml';

type Obj = Record<string, unknown>;
type Resource = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string> } } & Obj;

const root = resolve(dirname(new URL(import.meta.url).pathname), '..');
const k8s = join(root, 'k8s');
const problems: string[] = [];

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const readYaml = (file: string): unknown[] =>
  parseAllDocuments(readFileSync(file, 'utf8'))
    .map((d) => {
      if (d.errors.length) throw new Error(`${relative(root, file)}: ${d.errors.map((e) => e.message).join('; ')}`);
      return d.toJS() as unknown;
    })
    .filter((d) => d !== null);

const CLUSTER_SCOPED = new Set(['Namespace', 'PersistentVolume', 'ClusterRole', 'ClusterRoleBinding', 'StorageClass', 'CustomResourceDefinition']);
const KUSTOMIZATION_FIELDS = new Set([
  'apiVersion',
  'kind',
  'namespace',
  'resources',
  'labels',
  'images',
  'replicas',
  'configMapGenerator',
  'secretGenerator',
  'patches',
]);

/** Strategic merge as kustomize does it for these files: maps merge, lists of named items merge by name (volumeMounts by mountPath), other lists are replaced. */
function merge(base: unknown, patch: unknown): unknown {
  if (isObj(base) && isObj(patch)) {
    const out: Obj = { ...base };
    for (const [k, v] of Object.entries(patch)) out[k] = k in base ? merge(base[k], v) : v;
    return out;
  }
  if (Array.isArray(base) && Array.isArray(patch) && patch.every(isObj) && base.every(isObj)) {
    const key = patch.every((p) => 'name' in p) ? 'name' : patch.every((p) => 'mountPath' in p) ? 'mountPath' : undefined;
    if (!key) return patch;
    const out = base.map((b) => {
      const p = patch.find((x) => x[key] === b[key]);
      return p ? merge(b, p) : b;
    });
    return [...out, ...patch.filter((p) => !base.some((b) => b[key] === p[key]))];
  }
  return patch;
}

function gitIgnored(file: string): boolean {
  const patterns = readFileSync(join(root, '.gitignore'), 'utf8')
    .split('\n')
    .filter((l) => l && !l.startsWith('#'));
  const rel = relative(root, file);
  return patterns.some((p) => new RegExp(`^${p.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')}$`).test(rel));
}

function generate(dir: string, kind: 'ConfigMap' | 'Secret', g: Obj): Resource {
  const data: Record<string, string> = {};
  for (const literal of (g.literals as string[] | undefined) ?? []) {
    const at = literal.indexOf('=');
    data[literal.slice(0, at)] = literal.slice(at + 1);
  }
  for (const entry of (g.files as string[] | undefined) ?? []) {
    const at = entry.indexOf('=');
    const path = at < 0 ? entry : entry.slice(at + 1);
    const key = at < 0 ? basename(entry) : entry.slice(0, at);
    const file = join(dir, path);
    if (existsSync(file)) data[key] = readFileSync(file, 'utf8');
    else if (gitIgnored(file)) data[key] = 'stand-in for a git-ignored file';
    else throw new Error(`${relative(root, dir)}: generator ${String(g.name)} names the missing file ${path}`);
  }
  const encoded = kind === 'Secret' ? Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])) : data;
  return { apiVersion: 'v1', kind, metadata: { name: String(g.name) }, data: encoded, ...(kind === 'Secret' ? { type: 'Opaque' } : {}) };
}

function podSpecs(r: Resource): Obj[] {
  const spec = r.spec as Obj | undefined;
  const template = (spec?.template ?? (spec?.jobTemplate as Obj | undefined)?.spec) as Obj | undefined;
  const pod = (template?.template ?? template) as Obj | undefined;
  return pod && isObj(pod.spec) ? [pod.spec] : [];
}

/** Renders one kustomization directory into its objects. */
export function render(dir: string): Resource[] {
  const file = join(dir, 'kustomization.yaml');
  const k = parseYaml(readFileSync(file, 'utf8')) as Obj;
  for (const field of Object.keys(k)) if (!KUSTOMIZATION_FIELDS.has(field)) throw new Error(`${relative(root, file)}: the check cannot render "${field}"`);
  let out: Resource[] = [];
  for (const entry of (k.resources as string[] | undefined) ?? []) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) out.push(...render(path));
    else out.push(...(readYaml(path) as Resource[]));
  }
  for (const [kind, list] of [
    ['ConfigMap', k.configMapGenerator],
    ['Secret', k.secretGenerator],
  ] as const) {
    for (const g of (list as Obj[] | undefined) ?? []) {
      const made = generate(dir, kind, g);
      const existing = out.find((r) => r.kind === kind && r.metadata.name === made.metadata.name);
      if (g.behavior === 'merge') {
        if (!existing) throw new Error(`${relative(root, file)}: ${kind} ${made.metadata.name} to merge is not in the resources`);
        existing.data = { ...(existing.data as Obj), ...(made.data as Obj) };
      } else if (existing) throw new Error(`${relative(root, file)}: ${kind} ${made.metadata.name} generated twice`);
      else out.push(made);
    }
  }
  for (const p of (k.patches as { path: string }[] | undefined) ?? []) {
    for (const patch of readYaml(join(dir, p.path)) as Resource[]) {
      const at = out.findIndex((r) => r.kind === patch.kind && r.metadata.name === patch.metadata.name);
      if (at < 0) throw new Error(`${relative(root, file)}: patch ${p.path} matches no ${patch.kind} ${patch.metadata.name}`);
      out[at] = merge(out[at], patch) as Resource;
    }
  }
  for (const r of (k.replicas as { name: string; count: number }[] | undefined) ?? []) {
    const target = out.find((o) => ['Deployment', 'StatefulSet'].includes(o.kind) && o.metadata.name === r.name);
    if (!target) throw new Error(`${relative(root, file)}: replicas for ${r.name}, which is not rendered`);
    (target.spec as Obj).replicas = r.count;
  }
  for (const image of (k.images as { name: string; newName?: string; newTag?: string }[] | undefined) ?? []) {
    for (const spec of out.flatMap(podSpecs)) {
      for (const c of [...((spec.containers as Obj[]) ?? []), ...((spec.initContainers as Obj[]) ?? [])]) {
        const [name, tag] = String(c.image).split(':');
        if (name === image.name) c.image = `${image.newName ?? name}:${image.newTag ?? tag ?? 'latest'}`;
      }
    }
  }
  if (typeof k.namespace === 'string') {
    for (const r of out) if (!CLUSTER_SCOPED.has(r.kind)) r.metadata.namespace = k.namespace;
  }
  for (const l of (k.labels as { pairs: Record<string, string>; includeSelectors?: boolean }[] | undefined) ?? []) {
    if (l.includeSelectors) throw new Error(`${relative(root, file)}: the check renders labels without selectors only`);
    for (const r of out) r.metadata.labels = { ...r.metadata.labels, ...l.pairs };
  }
  out = out.map((r) => structuredClone(r));
  return out;
}

/**
 * Runs a precompiled Kubernetes schema validator on a copy of the object whose reads are recorded:
 * a key of an object the validator looked into (and did not enumerate as a map) that it never read
 * is a field the schema does not have, which the API server would drop or refuse.
 */
function unknownFields(validate: (data: unknown) => boolean, data: unknown): { valid: boolean; errors: unknown; unknown: string[] } {
  const visits = new Map<Obj, { path: string; read: Set<string>; enumerated: boolean }>();
  const wrap = (value: unknown, path: string): unknown => {
    if (!isObj(value) && !Array.isArray(value)) return value;
    if (isObj(value) && !visits.has(value)) visits.set(value, { path, read: new Set(), enumerated: false });
    return new Proxy(value, {
      get(target, key, receiver) {
        const v = Reflect.get(target, key, receiver) as unknown;
        if (typeof key !== 'string') return v;
        if (isObj(target)) visits.get(target)!.read.add(key);
        return wrap(v, `${path}/${key}`);
      },
      ownKeys(target) {
        if (isObj(target)) visits.get(target)!.enumerated = true;
        return Reflect.ownKeys(target);
      },
    });
  };
  const valid = validate(wrap(data, ''));
  const unknown: string[] = [];
  for (const [object, visit] of visits) {
    if (visit.enumerated || visit.read.size === 0) continue;
    for (const key of Object.keys(object)) if (!visit.read.has(key)) unknown.push(`${visit.path}/${key}`);
  }
  return { valid, errors: (validate as unknown as { errors?: unknown }).errors, unknown };
}

async function kubernetesValidator(r: Resource): Promise<((data: unknown) => boolean) | undefined> {
  const slash = r.apiVersion.indexOf('/');
  const group = slash < 0 ? 'core' : r.apiVersion.slice(0, slash).replace(/\..*$/, '');
  const version = r.apiVersion.slice(slash + 1);
  const capital = (word: string) => word.charAt(0).toUpperCase() + word.slice(1);
  const name = `IoK8sApi${capital(group)}${capital(version)}${r.kind}`;
  try {
    return ((await import(`kubernetes-models/_schemas/${name}`)) as { validate: (data: unknown) => boolean }).validate;
  } catch {
    return undefined;
  }
}

const ajv = new Ajv({ allErrors: true, strict: true });
const crdSchemas: Record<string, (data: unknown) => boolean> = {
  'postgresql.cnpg.io/v1/Cluster': ajv.compile(JSON.parse(readFileSync(join(k8s, 'schemas', 'cnpg-cluster.schema.json'), 'utf8')) as object),
  'monitoring.coreos.com/v1/PodMonitor': ajv.compile(JSON.parse(readFileSync(join(k8s, 'schemas', 'podmonitor.schema.json'), 'utf8')) as object),
};

/** What the platform asks of every pod (k8s/README.md, Security). */
function podRules(r: Resource): string[] {
  const found: string[] = [];
  for (const spec of podSpecs(r)) {
    const security = (spec.securityContext ?? {}) as Obj;
    if (security.runAsNonRoot !== true) found.push('pod securityContext.runAsNonRoot is not true');
    for (const c of (spec.containers as Obj[]) ?? []) {
      const cs = (c.securityContext ?? {}) as Obj;
      const resources = (c.resources ?? {}) as Obj;
      if (cs.readOnlyRootFilesystem !== true) found.push(`container ${String(c.name)}: readOnlyRootFilesystem is not true`);
      if (cs.allowPrivilegeEscalation !== false) found.push(`container ${String(c.name)}: allowPrivilegeEscalation is not false`);
      if (!isObj(resources.requests) || !isObj(resources.limits)) found.push(`container ${String(c.name)}: resource requests and limits are not both set`);
      // METRICS_PORT is the container port `metrics` that the PodMonitor scrapes and the NetworkPolicy opens.
      const metricsEnv = ((c.env as Obj[] | undefined) ?? []).find((e) => e.name === 'METRICS_PORT');
      const metricsPort = ((c.ports as Obj[] | undefined) ?? []).find((p) => p.name === 'metrics');
      if ((metricsEnv || metricsPort) && String(metricsEnv?.value) !== String(metricsPort?.containerPort))
        found.push(
          `container ${String(c.name)}: METRICS_PORT (${String(metricsEnv?.value)}) is not its port named metrics (${String(metricsPort?.containerPort)})`,
        );
      // The metrics listener binds to loopback unless METRICS_HOST opens it: the scraper comes to the pod's address.
      const metricsHost = ((c.env as Obj[] | undefined) ?? []).find((e) => e.name === 'METRICS_HOST');
      if (metricsPort && !['0.0.0.0', '::'].includes(String(metricsHost?.value)))
        found.push(
          `container ${String(c.name)}: METRICS_HOST (${String(metricsHost?.value)}) is not 0.0.0.0 or ::, so its port named metrics cannot be scraped`,
        );
      for (const env of (c.env as Obj[] | undefined) ?? []) {
        if (isObj(env.valueFrom) && 'secretKeyRef' in env.valueFrom)
          found.push(`container ${String(c.name)}: ${String(env.name)} comes from a Secret as a variable, not a file`);
      }
    }
  }
  return found;
}

async function checkObjects(label: string, objects: Resource[]): Promise<void> {
  const names = new Set<string>();
  for (const r of objects) {
    const id = `${label}: ${r.kind} ${r.metadata?.namespace ?? ''}/${r.metadata?.name}`;
    const key = `${r.apiVersion}/${r.kind}/${r.metadata?.namespace}/${r.metadata?.name}`;
    if (names.has(key)) problems.push(`${id}: rendered twice`);
    names.add(key);
    const crd = crdSchemas[`${r.apiVersion}/${r.kind}`];
    if (crd) {
      if (!crd(r)) problems.push(`${id}: ${ajv.errorsText((crd as unknown as { errors: never }).errors)}`);
    } else {
      const validate = await kubernetesValidator(r);
      if (!validate) {
        problems.push(`${id}: no schema for ${r.apiVersion} ${r.kind}`);
        continue;
      }
      const result = unknownFields(validate, r);
      if (!result.valid) problems.push(`${id}: ${JSON.stringify(result.errors)}`);
      for (const field of result.unknown) problems.push(`${id}: unknown field ${field}`);
    }
    for (const rule of podRules(r)) problems.push(`${id}: ${rule}`);
  }
}

type NatsValues = {
  config?: { jetstream?: { enabled?: boolean }; mqtt?: { enabled?: boolean }; merge?: { authorization?: unknown; pid_file?: unknown } & Obj };
  container?: { patch?: { op: string; path: string; value: unknown }[] };
  podTemplate?: { merge?: { spec?: Obj }; patch?: { op: string; path: string; value: unknown }[] };
};

/** The values appended to a list by the JSON patch ops `add <path>/-` (how the chart adds to its own lists). */
const appended = (patch: { op: string; path: string; value: unknown }[] | undefined, path: string): Obj[] =>
  (patch ?? []).filter((p) => p.op === 'add' && p.path === `${path}/-` && isObj(p.value)).map((p) => p.value as Obj);

/** The value of a command-line option in a container's command and args. */
const option = (c: Obj, name: string): string | undefined => {
  const argv = [...((c.command as string[] | undefined) ?? []), ...((c.args as string[] | undefined) ?? [])];
  const at = argv.indexOf(name);
  return at < 0 ? undefined : argv[at + 1];
};

/**
 * The NATS Helm values: JetStream and MQTT on, and the bus authorization of
 * docs/adr/0026-bus-authorization.md wired end to end. What the values add to the chart's pod (the
 * bus-users initContainer and sidecar, volumes, the server's mount) is validated against the
 * Kubernetes schemas and the pod rules; `image` is the release the services run.
 */
async function checkNatsValues(file: string, servicesImage: string | undefined): Promise<void> {
  const values = parseYaml(readFileSync(file, 'utf8')) as NatsValues;
  const rel = relative(root, file);
  const fail = (problem: string): void => void problems.push(`${rel}: ${problem}`);
  if (values.config?.jetstream?.enabled !== true) fail('config.jetstream.enabled must be true');
  if (values.config?.mqtt?.enabled !== true) fail('config.mqtt.enabled must be true');
  const merge = values.config?.merge;
  if (!isObj(merge)) return fail('config.merge (where the accounts are included) must be a map');

  // include <users file> at the top of the configuration, where the accounts block goes (the chart
  // turns a `…$include` key into an include); an authorization block would add users outside them.
  if (merge.authorization !== undefined) fail('config.merge.authorization must not be set: the users are in the accounts of the included users file');
  const includes = Object.entries(merge).filter(([k]) => k.endsWith('$include'));
  if (includes.length !== 1 || typeof includes[0]![1] !== 'string') return fail('config.merge must hold one `$include` of the users file (its accounts block)');
  const usersFile = resolve('/etc/nats-config', includes[0]![1] as string);
  const pidFile = merge.pid_file;
  if (typeof pidFile !== 'string') return fail('config.merge.pid_file must name the pid file bus-users signals');

  const spec = values.podTemplate?.merge?.spec ?? {};
  if (spec.shareProcessNamespace !== true) fail('podTemplate.merge.spec.shareProcessNamespace must be true (bus-users signals nats-server)');
  const init = ((spec.initContainers as Obj[] | undefined) ?? []).filter((c) => c.name === 'bus-users');
  const sidecar = appended(values.podTemplate?.patch, '/spec/containers').filter((c) => c.name === 'bus-users');
  const volumes = appended(values.podTemplate?.patch, '/spec/volumes');
  const serverMounts = appended(values.container?.patch, '/volumeMounts');
  if (init.length !== 1) fail('podTemplate.merge.spec.initContainers must hold one bus-users container (render once before the server starts)');
  if (sidecar.length !== 1) fail('podTemplate.patch must add one bus-users container to /spec/containers (render every interval, reload)');
  if (init.length !== 1 || sidecar.length !== 1) return;
  const [once, watcher] = [init[0]!, sidecar[0]!];

  // Both render the file the server includes, on a volume the server mounts read-only.
  const mountOf = (mounts: unknown, path: string) => ((mounts as Obj[] | undefined) ?? []).find((m) => path.startsWith(`${String(m.mountPath)}/`));
  const serverMount = mountOf(serverMounts, usersFile);
  if (!serverMount) fail(`container.patch must mount the volume holding ${usersFile} into the nats container`);
  else if (serverMount.readOnly !== true) fail('the nats container must mount the users file read-only');
  for (const c of [once, watcher]) {
    const where = c === once ? 'the bus-users initContainer' : 'the bus-users container';
    if (option(c, '--users-file') !== usersFile) fail(`${where} must write --users-file ${usersFile}, the file config.merge includes`);
    const mount = mountOf(c.volumeMounts, usersFile);
    if (serverMount && (!mount || mount.name !== serverMount.name || mount.mountPath !== serverMount.mountPath))
      fail(`${where} must mount the server's volume ${String(serverMount.name)} at ${String(serverMount.mountPath)}`);
    if (servicesImage && c.image !== servicesImage) fail(`${where} runs ${String(c.image)}, not the services' release ${servicesImage}`);
  }
  if (!((once.args as string[] | undefined) ?? []).includes('--once')) fail('the bus-users initContainer must render --once');
  if (option(watcher, '--pid-file') !== pidFile) fail(`the bus-users container must signal through --pid-file ${pidFile}, config.merge.pid_file`);
  const pidMount = mountOf(watcher.volumeMounts, pidFile);
  // `pid` is the chart's emptyDir at /var/run/nats, where its configuration puts the pid file.
  if (!pidMount || pidMount.name !== 'pid' || pidMount.mountPath !== dirname(pidFile))
    fail(`the bus-users container must mount the chart's volume pid at ${dirname(pidFile)}`);
  const chartVolumes = new Set(['pid', 'config']);
  for (const c of [once, watcher])
    for (const m of (c.volumeMounts as Obj[] | undefined) ?? [])
      if (!chartVolumes.has(String(m.name)) && !volumes.some((v) => v.name === m.name))
        fail(`bus-users mounts ${String(m.name)}, which podTemplate.patch does not add`);

  // The pod the values add to, checked like the rendered ones: the chart's own containers and
  // volumes are not part of it (the chart renders them).
  const pod = { ...spec, containers: sidecar, initContainers: init, volumes };
  const validate = await kubernetesValidator({ apiVersion: 'v1', kind: 'PodSpec', metadata: { name: 'nats' } });
  const mountValidate = await kubernetesValidator({ apiVersion: 'v1', kind: 'VolumeMount', metadata: { name: 'nats' } });
  for (const [what, check, data] of [
    ['podTemplate (merge.spec and patch)', validate, pod],
    ...serverMounts.map((m) => ['container.patch volumeMount', mountValidate, m] as const),
  ] as const) {
    const result = unknownFields(check!, data);
    if (!result.valid) fail(`${what}: ${JSON.stringify(result.errors)}`);
    for (const field of result.unknown) fail(`${what}: unknown field ${field}`);
  }
  for (const rule of podRules({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'nats' },
    spec: { template: { spec: { ...pod, containers: [...init, ...sidecar] } } },
  }))
    fail(`podTemplate: ${rule}`);
}

/** Whether a label selector (matchLabels, matchExpressions with In/NotIn/Exists/DoesNotExist) selects these labels. */
function selects(selector: Obj, labels: Record<string, string>): boolean {
  const match = Object.entries((selector.matchLabels as Record<string, string> | undefined) ?? {}).every(([k, v]) => labels[k] === v);
  return (
    match &&
    ((selector.matchExpressions as { key: string; operator: string; values?: string[] }[] | undefined) ?? []).every((e) =>
      e.operator === 'In'
        ? (e.values ?? []).includes(labels[e.key]!)
        : e.operator === 'NotIn'
          ? !(e.values ?? []).includes(labels[e.key]!)
          : e.operator === 'Exists'
            ? e.key in labels
            : !(e.key in labels),
    )
  );
}

/** Every PodMonitor selects Deployments of its namespace, rendered by another kustomization, whose containers all name the port it scrapes. */
function checkPodMonitors(objects: Resource[]): void {
  for (const monitor of objects.filter((o) => o.kind === 'PodMonitor')) {
    const id = `PodMonitor ${monitor.metadata.namespace ?? ''}/${monitor.metadata.name}`;
    const spec = monitor.spec as { selector: Obj; podMetricsEndpoints: { port?: string }[] };
    const targets = objects.filter(
      (o) =>
        o.kind === 'Deployment' &&
        o.metadata.namespace === monitor.metadata.namespace &&
        selects(spec.selector, ((((o.spec as Obj).template as Obj).metadata as Obj).labels as Record<string, string>) ?? {}),
    );
    if (targets.length === 0) problems.push(`${id}: selects no Deployment of its namespace`);
    for (const target of targets)
      for (const endpoint of spec.podMetricsEndpoints) {
        const named = podSpecs(target).some((pod) =>
          ((pod.containers as Obj[] | undefined) ?? []).some((c) => ((c.ports as Obj[] | undefined) ?? []).some((p) => p.name === endpoint.port)),
        );
        if (!named) problems.push(`${id}: Deployment ${target.metadata.name} has no container port named ${String(endpoint.port)}`);
      }
  }
}

function kustomizations(dir: string): string[] {
  const found = existsSync(join(dir, 'kustomization.yaml')) ? [dir] : [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) if (entry.isDirectory()) found.push(...kustomizations(join(dir, entry.name)));
  return found;
}

async function main(): Promise<void> {
  let productionImage: string | undefined;
  const rendered: Resource[] = [];
  for (const dir of kustomizations(join(k8s, 'overlays'))) {
    const label = relative(root, dir);
    let objects: Resource[];
    try {
      objects = render(dir);
    } catch (error) {
      problems.push(`${label}: ${(error as Error).message}`);
      continue;
    }
    if (label === join('k8s', 'overlays', 'production')) {
      const deployment = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'management-service');
      productionImage = deployment && String((podSpecs(deployment)[0]?.containers as Obj[] | undefined)?.[0]?.image);
    }
    rendered.push(...objects);
    const before = problems.length;
    await checkObjects(label, objects);
    const kinds = [...new Set(objects.map((o) => o.kind))].join(', ');
    console.log(`${problems.length === before ? 'ok  ' : 'FAIL'} ${label}: ${objects.length} objects (${kinds})`);
  }
  checkPodMonitors(rendered);
  const natsValues = join(k8s, 'overlays', 'production', 'dependencies', 'nats-values.yaml');
  const before = problems.length;
  await checkNatsValues(natsValues, productionImage);
  console.log(`${problems.length === before ? 'ok  ' : 'FAIL'} ${relative(root, natsValues)}: JetStream, MQTT, bus authorization (bus-users containers)`);
  for (const p of problems) console.error(`  ${p}`);
  if (problems.length) {
    console.error(`k8s:check: ${problems.length} problem(s)`);
    process.exit(1);
  }
  console.log('k8s:check: every object is valid');
}

await main();
