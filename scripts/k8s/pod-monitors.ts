import { podSpecs, type Obj, type Resource } from './resources.ts';

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
export function checkPodMonitors(objects: Resource[]): string[] {
  const problems: string[] = [];
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
  return problems;
}
