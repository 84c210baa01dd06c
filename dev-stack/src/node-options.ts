/**
 * Options of node for a service's process (docs/adr/0064-async-context-frame.md): AsyncLocalStorage,
 * which carries a request's trace context and round-trip count, backed by AsyncContextFrame instead
 * of a hook on every promise. Node.js 24 does so by default; Node.js 22 needs the option.
 */
export const SERVICE_NODE_OPTIONS: readonly string[] = Number(process.versions.node.split('.')[0]) < 24 ? ['--experimental-async-context-frame'] : [];
