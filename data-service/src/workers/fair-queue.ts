/**
 * The waiting simulations of every tenant in front of the worker threads (README, "Future
 * performance"). Each tenant has its own FIFO of at most `perTenant` waiting items; the next item
 * taken is the head of the tenant whose last run started longest ago (a tenant that has not run
 * goes first, ties by arrival). That is round-robin among the tenants with waiting items: a tenant
 * that queued many large runs gets one worker turn per round, like every other tenant, instead of
 * holding the workers until its queue is empty. Pure bookkeeping; the scheduler does the I/O.
 */
export class FairQueue<T> {
  private readonly waiting = new Map<string, { item: T; arrival: number }[]>();
  /** Runs started and not finished, per tenant. */
  private readonly running = new Map<string, number>();
  /**
   * Order number of each tenant's last started run. Kept when the tenant has nothing left, so one
   * that comes back after a pause does not jump ahead of tenants that waited all along (one number
   * per tenant that ever ran).
   */
  private readonly lastStarted = new Map<string, number>();
  private arrivals = 0;
  private starts = 0;
  private waitingTotal = 0;
  private runningTotal = 0;

  constructor(private readonly perTenant: number) {
    if (!Number.isInteger(perTenant) || perTenant < 1) throw new RangeError(`perTenant must be a whole number ≥ 1, not ${perTenant}`);
  }

  /** Queues the item; false (and nothing queued) when the tenant already has `perTenant` waiting. */
  add(tenant: string, item: T): boolean {
    let queue = this.waiting.get(tenant);
    if ((queue?.length ?? 0) >= this.perTenant) return false;
    if (!queue) this.waiting.set(tenant, (queue = []));
    queue.push({ item, arrival: this.arrivals++ });
    this.waitingTotal++;
    return true;
  }

  /** Takes a waiting item out of the queue without running it; false when it is not waiting. */
  remove(tenant: string, item: T): boolean {
    const queue = this.waiting.get(tenant);
    const index = queue?.findIndex((entry) => entry.item === item) ?? -1;
    if (index < 0) return false;
    queue!.splice(index, 1);
    this.waitingTotal--;
    if (queue!.length === 0) this.waiting.delete(tenant);
    return true;
  }

  /**
   * The next item to run, counted as running for its tenant until `finished`; undefined when none
   * waits. With `may`, only tenants for which it holds, given their runs running, are considered.
   */
  take(may?: (tenant: string, running: number) => boolean): { tenant: string; item: T } | undefined {
    let best: { tenant: string; last: number; arrival: number } | undefined;
    for (const [tenant, queue] of this.waiting) {
      if (may && !may(tenant, this.running.get(tenant) ?? 0)) continue;
      const last = this.lastStarted.get(tenant) ?? -1;
      const arrival = queue[0]!.arrival;
      if (!best || last < best.last || (last === best.last && arrival < best.arrival)) best = { tenant, last, arrival };
    }
    if (!best) return undefined;
    const queue = this.waiting.get(best.tenant)!;
    const { item } = queue.shift()!;
    if (queue.length === 0) this.waiting.delete(best.tenant);
    this.waitingTotal--;
    this.running.set(best.tenant, (this.running.get(best.tenant) ?? 0) + 1);
    this.runningTotal++;
    this.lastStarted.set(best.tenant, this.starts++);
    return { tenant: best.tenant, item };
  }

  /** A run that `take` handed out ended (answered, failed or cancelled). */
  finished(tenant: string): void {
    const count = this.running.get(tenant) ?? 0;
    if (count === 0) throw new Error(`no run of tenant ${tenant} is running`);
    if (count === 1) this.running.delete(tenant);
    else this.running.set(tenant, count - 1);
    this.runningTotal--;
  }

  /** Takes every waiting item out of the queue (at shutdown). */
  clear(): T[] {
    const items = [...this.waiting.values()].flat().map((entry) => entry.item);
    this.waiting.clear();
    this.waitingTotal = 0;
    return items;
  }

  /** Items waiting: of one tenant, or of all. */
  waitingCount(tenant?: string): number {
    return tenant === undefined ? this.waitingTotal : (this.waiting.get(tenant)?.length ?? 0);
  }

  /** Runs taken and not finished: of one tenant, or of all. */
  runningCount(tenant?: string): number {
    return tenant === undefined ? this.runningTotal : (this.running.get(tenant) ?? 0);
  }

  /** Tenants with at least one item waiting. */
  tenantsWaiting(): number {
    return this.waiting.size;
  }
}

/**
 * Seconds a refused tenant should wait before trying again: about the time until one of its
 * waiting runs reaches a worker, when the workers take one run of each waiting tenant per round.
 * At least 1 (Retry-After is whole seconds).
 */
export function retryAfterSeconds(averageRunMs: number, tenantsWaiting: number, slots: number): number {
  const rounds = Math.max(1, tenantsWaiting) / Math.max(1, slots);
  return Math.max(1, Math.ceil((averageRunMs * rounds) / 1000));
}
