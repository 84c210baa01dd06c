import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { isObj, podSpecs, type Obj, type Resource } from './resources.ts';

// Each rendered object against its schema (Kubernetes' own, or the vendored CRD schemas) with
// unknown fields refused, and the rules every pod follows.

const k8s = join(import.meta.dirname, '..', '..', 'k8s');

/**
 * Runs a precompiled Kubernetes schema validator on a copy of the object whose reads are recorded:
 * a key of an object the validator looked into (and did not enumerate as a map) that it never read
 * is a field the schema does not have, which the API server would drop or refuse.
 */
export function unknownFields(validate: (data: unknown) => boolean, data: unknown): { valid: boolean; errors: unknown; unknown: string[] } {
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

export async function kubernetesValidator(r: Resource): Promise<((data: unknown) => boolean) | undefined> {
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
export function podRules(r: Resource): string[] {
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

export async function checkObjects(label: string, objects: Resource[]): Promise<string[]> {
  const problems: string[] = [];
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
  return problems;
}
