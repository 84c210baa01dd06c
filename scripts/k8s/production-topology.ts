import { isObj, podSpecs, type Obj, type Resource } from './resources.ts';

// What production must keep to survive the loss of a pod, a node or a Postgres or NATS server
// (k8s/README.md, Production topology): every Deployment at least two replicas apart, a disruption
// budget and an autoscaler that never go below that, a shutdown that fits its grace period; a
// Postgres cluster that commits on a synchronous replica; NATS servers that can hold a stream's
// replicas. Pure: the rendered objects and the NATS values in, problems out.

/** Below two, one pod lost (a node drained, a rollout, a crash) is the whole service lost. */
export const MIN_REPLICAS = 2;
/** A primary and two replicas (Postgres), three servers (NATS): a quorum survives one lost. */
export const MIN_CLUSTER_SIZE = 3;
/** What a service closes after its HTTP server (NATS drained, jobs and threads stopped, the pool): 0.15 s when idle. */
export const SHUTDOWN_MARGIN_SECONDS = 5;
/**
 * Replicas each service needs for the nightly batch of 1,000,000 robo-advised portfolios in an hour,
 * from the CPU per optimization `npm run bench:capacity` measured at the CPU limits of
 * k8s/base (docs/scaling.md, Capacity with replicas). An autoscaler must be able to reach them with
 * one pod more, as a node drain takes one away (the budget's maxUnavailable: 1).
 */
export const NIGHTLY_REPLICAS: Readonly<Record<string, number>> = { 'management-service': 4, 'data-service': 1 };
/** Kubernetes' default when a pod names no terminationGracePeriodSeconds. */
const DEFAULT_GRACE_SECONDS = 30;

type Labels = Record<string, string>;

const labelsOf = (v: unknown): Labels => (isObj(v) ? (v as Labels) : {});
const id = (r: Resource) => `${r.kind} ${r.metadata.namespace ?? ''}/${r.metadata.name}`;
const sameNamespace = (a: Resource, b: Resource) => (a.metadata.namespace ?? '') === (b.metadata.namespace ?? '');

/** Whether a label selector (matchLabels and matchExpressions) selects a pod with these labels; `{}` selects every pod. */
export function selects(selector: unknown, labels: Labels): boolean {
  if (!isObj(selector)) return false;
  for (const [key, value] of Object.entries(labelsOf(selector.matchLabels))) if (labels[key] !== value) return false;
  for (const e of (selector.matchExpressions as Obj[] | undefined) ?? []) {
    const key = String(e.key);
    const values = ((e.values as unknown[] | undefined) ?? []).map(String);
    const has = Object.hasOwn(labels, key);
    const ok =
      e.operator === 'In'
        ? has && values.includes(labels[key]!)
        : e.operator === 'NotIn'
          ? !has || !values.includes(labels[key]!)
          : e.operator === 'Exists'
            ? has
            : e.operator === 'DoesNotExist' && !has;
    if (!ok) return false;
  }
  return true;
}

/**
 * A container's setting as the process sees it: its own `env` value, else the last ConfigMap of
 * its `envFrom` (among the rendered objects) that holds it; undefined when neither sets it.
 */
export function settingOf(container: Obj, namespaceOf: Resource, objects: Resource[], name: string): string | undefined {
  const own = ((container.env as Obj[] | undefined) ?? []).find((e) => e.name === name);
  if (own) return typeof own.value === 'string' ? own.value : undefined;
  let found: string | undefined;
  for (const source of (container.envFrom as Obj[] | undefined) ?? []) {
    const ref = source.configMapRef as Obj | undefined;
    const map = ref && objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === ref.name && sameNamespace(o, namespaceOf));
    const data = labelsOf(map?.data);
    const prefix = typeof source.prefix === 'string' ? source.prefix : '';
    for (const [key, value] of Object.entries(data)) if (`${prefix}${key}` === name) found = value;
  }
  return found;
}

/** The seconds a preStop hook holds the container before SIGTERM: the sleep action or `sleep <n>` run in it. */
export function preStopSeconds(container: Obj): number | 'none' | 'unknown' {
  const preStop = (container.lifecycle as Obj | undefined)?.preStop as Obj | undefined;
  if (!isObj(preStop)) return 'none';
  const sleep = preStop.sleep as Obj | undefined;
  if (isObj(sleep)) return Number.isInteger(sleep.seconds) ? (sleep.seconds as number) : 'unknown';
  const argv = ((preStop.exec as Obj | undefined)?.command as unknown[] | undefined)?.map(String) ?? [];
  if (argv.length === 2 && /^(\/(usr\/)?bin\/)?sleep$/.test(argv[0]!) && /^\d+$/.test(argv[1]!)) return Number(argv[1]);
  return 'unknown';
}

/** A whole number of pods from an integer or a percentage of `of`, as the disruption controller rounds it (up). */
const pods = (v: unknown, of: number): number | undefined =>
  Number.isInteger(v) ? (v as number) : typeof v === 'string' && /^\d+%$/.test(v) ? Math.ceil((Number(v.slice(0, -1)) * of) / 100) : undefined;

function budgetProblems(d: Resource, labels: Labels, replicas: number, objects: Resource[]): string[] {
  const budgets = objects.filter((o) => o.kind === 'PodDisruptionBudget' && sameNamespace(o, d) && selects((o.spec as Obj | undefined)?.selector, labels));
  if (budgets.length === 0) return ['no PodDisruptionBudget selects its pods (maxUnavailable: 1 or minAvailable: 1)'];
  // The eviction API refuses to evict a pod that more than one budget selects.
  if (budgets.length > 1)
    return [`${budgets.length} PodDisruptionBudgets select its pods (${budgets.map((b) => b.metadata.name).join(', ')}); evictions need one`];
  // Under two replicas no budget can keep one pod and let one go; the replica count is the problem.
  if (replicas < MIN_REPLICAS) return [];
  const spec = (budgets[0]!.spec ?? {}) as Obj;
  const name = `PodDisruptionBudget ${budgets[0]!.metadata.name}`;
  if (spec.maxUnavailable !== undefined) {
    const n = pods(spec.maxUnavailable, replicas);
    return n !== undefined && n >= 1 && n < replicas
      ? []
      : [`${name}: maxUnavailable ${String(spec.maxUnavailable)} must let 1 to ${replicas - 1} of ${replicas} pods go`];
  }
  const n = pods(spec.minAvailable, replicas);
  return n !== undefined && n >= 1 && n < replicas
    ? []
    : [`${name}: minAvailable ${String(spec.minAvailable)} must keep at least 1 pod and let one go (below ${replicas}), or a node drain waits forever`];
}

function spreadProblems(pod: Obj, labels: Labels): string[] {
  const constraints = ((pod.topologySpreadConstraints as Obj[] | undefined) ?? []).filter((c) => selects(c.labelSelector, labels));
  const over = (key: string) => constraints.find((c) => c.topologyKey === key);
  const problems: string[] = [];
  if (!over('kubernetes.io/hostname')) problems.push('no topologySpreadConstraints over kubernetes.io/hostname selecting its pods');
  const zone = over('topology.kubernetes.io/zone');
  if (!zone) problems.push('no topologySpreadConstraints over topology.kubernetes.io/zone selecting its pods');
  // A zone preference, not a rule: a cluster of one zone would otherwise leave replicas pending.
  else if (zone.whenUnsatisfiable !== 'ScheduleAnyway') problems.push('the spread over topology.kubernetes.io/zone must be whenUnsatisfiable: ScheduleAnyway');
  return problems;
}

function autoscalerProblems(d: Resource, objects: Resource[]): string[] {
  const hpas = objects.filter((o) => {
    const target = (o.spec as Obj | undefined)?.scaleTargetRef as Obj | undefined;
    return o.kind === 'HorizontalPodAutoscaler' && sameNamespace(o, d) && target?.kind === 'Deployment' && target.name === d.metadata.name;
  });
  if (hpas.length !== 1) return [`${hpas.length} HorizontalPodAutoscalers scale it; production needs one, on CPU`];
  const spec = (hpas[0]!.spec ?? {}) as Obj;
  const name = `HorizontalPodAutoscaler ${hpas[0]!.metadata.name}`;
  const min = (spec.minReplicas as number | undefined) ?? 1;
  const problems: string[] = [];
  if (min < MIN_REPLICAS) problems.push(`${name}: minReplicas ${min} is below ${MIN_REPLICAS}`);
  if (typeof spec.maxReplicas !== 'number' || spec.maxReplicas < min)
    problems.push(`${name}: maxReplicas ${String(spec.maxReplicas)} is below minReplicas ${min}`);
  const nightly = Object.hasOwn(NIGHTLY_REPLICAS, d.metadata.name) ? NIGHTLY_REPLICAS[d.metadata.name]! : 0;
  if (typeof spec.maxReplicas === 'number' && nightly > 0 && spec.maxReplicas < nightly + 1)
    problems.push(
      `${name}: maxReplicas ${spec.maxReplicas} is below the ${nightly} replicas the nightly batch of 1,000,000 portfolios in an hour needs, plus one for a drain (docs/scaling.md)`,
    );
  const cpu = ((spec.metrics as Obj[] | undefined) ?? []).some((m) => m.type === 'Resource' && (m.resource as Obj | undefined)?.name === 'cpu');
  if (!cpu) problems.push(`${name}: scales on no CPU metric`);
  return problems;
}

function shutdownProblems(d: Resource, pod: Obj, objects: Resource[], defaultShutdownGraceMs: number): string[] {
  const problems: string[] = [];
  const grace = (pod.terminationGracePeriodSeconds as number | undefined) ?? DEFAULT_GRACE_SECONDS;
  for (const c of (pod.containers as Obj[] | undefined) ?? []) {
    const where = `container ${String(c.name)}`;
    const readiness = ((c.readinessProbe as Obj | undefined)?.httpGet as Obj | undefined)?.path;
    if (readiness !== '/readyz') problems.push(`${where}: readinessProbe must be httpGet /readyz (is ${String(readiness)})`);
    const preStop = preStopSeconds(c);
    if (preStop === 'none') problems.push(`${where}: no preStop; SIGTERM would come before the endpoint removal reaches every proxy`);
    if (preStop === 'unknown') problems.push(`${where}: preStop is neither sleep.seconds nor exec sleep <seconds>; its duration cannot be checked`);
    if (typeof preStop !== 'number') continue;
    const setting = settingOf(c, d, objects, 'SHUTDOWN_GRACE_MS');
    const shutdownMs = setting === undefined ? defaultShutdownGraceMs : /^\d+$/.test(setting) ? Number(setting) : NaN;
    if (Number.isNaN(shutdownMs)) {
      problems.push(`${where}: SHUTDOWN_GRACE_MS ${String(setting)} is not a whole number of milliseconds`);
      continue;
    }
    const needed = preStop + Math.ceil(shutdownMs / 1000) + SHUTDOWN_MARGIN_SECONDS;
    if (grace < needed)
      problems.push(
        `${where}: terminationGracePeriodSeconds ${grace} is below preStop ${preStop} s + SHUTDOWN_GRACE_MS ${shutdownMs / 1000} s + ${SHUTDOWN_MARGIN_SECONDS} s = ${needed} s; the kubelet would kill requests in flight`,
      );
  }
  return problems;
}

/**
 * For every Deployment of production: replicas >= 2, one PodDisruptionBudget selecting its pods
 * that lets one go, spread over nodes and zones, one HPA on CPU with minReplicas >= 2 and
 * maxReplicas above NIGHTLY_REPLICAS (for the services named there), readiness on
 * /readyz, a preStop, and a grace period >= preStop + SHUTDOWN_GRACE_MS (the container's, or the
 * services' default) + SHUTDOWN_MARGIN_SECONDS.
 */
export function deploymentTopologyProblems(objects: Resource[], defaultShutdownGraceMs: number): string[] {
  const deployments = objects.filter((o) => o.kind === 'Deployment');
  if (deployments.length === 0) return ['production renders no Deployment'];
  const problems: string[] = [];
  for (const d of deployments) {
    const spec = (d.spec ?? {}) as Obj;
    const labels = labelsOf(((spec.template as Obj | undefined)?.metadata as Obj | undefined)?.labels);
    const pod = podSpecs(d)[0] ?? {};
    const replicas = (spec.replicas as number | undefined) ?? 1;
    const found = [
      ...(replicas < MIN_REPLICAS ? [`replicas ${replicas} is below ${MIN_REPLICAS}`] : []),
      ...budgetProblems(d, labels, replicas, objects),
      ...spreadProblems(pod, labels),
      ...autoscalerProblems(d, objects),
      ...shutdownProblems(d, pod, objects, defaultShutdownGraceMs),
    ];
    problems.push(...found.map((p) => `${id(d)}: ${p}`));
  }
  return problems;
}

/** Every CloudNativePG Cluster: >= 3 instances, of which at least one replica confirms each commit. */
export function postgresClusterProblems(objects: Resource[]): string[] {
  const clusters = objects.filter((o) => o.apiVersion === 'postgresql.cnpg.io/v1' && o.kind === 'Cluster');
  if (clusters.length === 0) return ['production renders no CloudNativePG Cluster'];
  const problems: string[] = [];
  for (const c of clusters) {
    const spec = (c.spec ?? {}) as Obj;
    const fail = (p: string) => problems.push(`${id(c)}: ${p}`);
    const instances = (spec.instances as number | undefined) ?? 1;
    if (instances < MIN_CLUSTER_SIZE) fail(`instances ${instances} is below ${MIN_CLUSTER_SIZE} (a primary and two replicas)`);
    const synchronous = (spec.postgresql as Obj | undefined)?.synchronous as Obj | undefined;
    const legacy = spec.minSyncReplicas !== undefined || spec.maxSyncReplicas !== undefined;
    if (synchronous && legacy) fail('postgresql.synchronous and minSyncReplicas/maxSyncReplicas exclude each other');
    const sync = synchronous ? Number(synchronous.number) : Number(spec.minSyncReplicas ?? 0);
    const max = synchronous ? sync : Number(spec.maxSyncReplicas ?? 0);
    if (!(sync >= 1)) fail('no synchronous replica (postgresql.synchronous.number or minSyncReplicas >= 1): a failover may lose acknowledged commits');
    else if (max < sync || max > instances - 1) fail(`synchronous replicas ${sync}..${max} must lie within the ${instances - 1} replicas`);
  }
  return problems;
}

/** The parts of the NATS Helm values the topology depends on. */
export type NatsClusterValues = { config?: { cluster?: { enabled?: unknown; replicas?: unknown }; jetstream?: { enabled?: unknown } } };

/**
 * The NATS Helm values run >= 3 clustered JetStream servers; a stream replica count the services
 * are given (NATS_STREAM_REPLICAS, when set) is between 3 and the servers there are.
 */
export function natsClusterProblems(values: NatsClusterValues, objects: Resource[]): string[] {
  const problems: string[] = [];
  const cluster = values.config?.cluster;
  const servers = cluster?.enabled === true && Number.isInteger(cluster.replicas) ? (cluster.replicas as number) : 1;
  if (cluster?.enabled !== true) problems.push('config.cluster.enabled must be true');
  else if (servers < MIN_CLUSTER_SIZE) problems.push(`config.cluster.replicas ${String(cluster?.replicas)} is below ${MIN_CLUSTER_SIZE} servers`);
  if (values.config?.jetstream?.enabled !== true) problems.push('config.jetstream.enabled must be true on every server');
  for (const d of objects.filter((o) => o.kind === 'Deployment'))
    for (const c of (podSpecs(d)[0]?.containers as Obj[] | undefined) ?? []) {
      const setting = settingOf(c, d, objects, 'NATS_STREAM_REPLICAS');
      if (setting === undefined) continue;
      const n = /^\d+$/.test(setting) ? Number(setting) : NaN;
      if (!(n >= MIN_CLUSTER_SIZE && n <= servers))
        problems.push(`${id(d)}: container ${String(c.name)}: NATS_STREAM_REPLICAS ${setting} must be ${MIN_CLUSTER_SIZE} to the ${servers} NATS servers`);
    }
  return problems;
}
