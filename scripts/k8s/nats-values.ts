import { readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { kubernetesValidator, podRules, unknownFields } from './object-checks.ts';
import { isObj, type Obj } from './resources.ts';

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

/** The containers the values add to the chart's pod (the bus-users initContainer and sidecar). */
export function natsValuesContainers(file: string): Obj[] {
  const values = parseYaml(readFileSync(file, 'utf8')) as NatsValues;
  const init = (values.podTemplate?.merge?.spec?.initContainers as unknown[] | undefined) ?? [];
  return [...init.filter(isObj), ...appended(values.podTemplate?.patch, '/spec/containers')];
}

/**
 * The NATS Helm values: JetStream and MQTT on, and the bus authorization of
 * docs/adr/0026-bus-authorization.md wired end to end. What the values add to the chart's pod (the
 * bus-users initContainer and sidecar, volumes, the server's mount) is validated against the
 * Kubernetes schemas and the pod rules; `image` is the release the services run.
 */
export async function checkNatsValues(root: string, file: string, servicesImage: string | undefined): Promise<string[]> {
  const problems: string[] = [];
  await natsValueProblems(root, file, servicesImage, problems);
  return problems;
}

async function natsValueProblems(root: string, file: string, servicesImage: string | undefined, problems: string[]): Promise<void> {
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
