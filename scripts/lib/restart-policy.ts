/** How often `npm start` restarts a service that exits on its own (docs/getting-started.md: "When a process dies"). */
export type RestartPolicy = { limit: number; windowMs: number };

/**
 * Whether a service that just exited at `now` is restarted, given the times of its earlier
 * restarts: at most `limit` restarts within any `windowMs`; one more exit means it keeps dying.
 */
export function mayRestart(restarts: readonly number[], now: number, policy: RestartPolicy): boolean {
  return restarts.filter((t) => now - t < policy.windowMs).length < policy.limit;
}
