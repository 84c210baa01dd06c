import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';

// The objects the checks read: YAML documents as plain objects.

export type Obj = Record<string, unknown>;
export type Resource = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string> } } & Obj;

export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The documents of a YAML stream, empty ones left out. */
export const parseYamlStream = (text: string, source: string): unknown[] =>
  parseAllDocuments(text)
    .map((d) => {
      if (d.errors.length) throw new Error(`${source}: ${d.errors.map((e) => e.message).join('; ')}`);
      return d.toJS() as unknown;
    })
    .filter((d) => d !== null);

export const readYaml = (file: string, source = file): unknown[] => parseYamlStream(readFileSync(file, 'utf8'), source);

/** The pod specs of a workload (a Deployment's, a StatefulSet's, a Job's, a CronJob's). */
export function podSpecs(r: Resource): Obj[] {
  const spec = r.spec as Obj | undefined;
  const template = (spec?.template ?? (spec?.jobTemplate as Obj | undefined)?.spec) as Obj | undefined;
  const pod = (template?.template ?? template) as Obj | undefined;
  return pod && isObj(pod.spec) ? [pod.spec] : [];
}
