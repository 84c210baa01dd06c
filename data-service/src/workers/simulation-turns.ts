/**
 * Whose unit a free simulation thread takes next (pure bookkeeping, docs/adr/0030-monte-carlo-threads.md):
 * the tenants with runs in progress take turns unit by unit, and within a tenant its runs take
 * turns. A tenant with many runs therefore gets one unit per round like a tenant with one, and a
 * tenant whose first run arrives goes before every tenant that already had a unit, so its run
 * starts with the next unit handed out rather than after a whole run.
 *
 * `next` asks the runs in that order for a unit that may start (a run's units wait for each other:
 * simulation/run-plan.ts); a run or tenant with none ready is passed over, keeping its turn.
 */
export class SimulationTurns<R> {
  /** Per run: its tenant and the order number of its last unit (−1: none yet). */
  private readonly runs = new Map<R, { tenant: string; turn: number; arrival: number }>();
  /** Per tenant with runs in progress: the order number of its last unit (−1: none yet), its runs, when it came. */
  private readonly tenants = new Map<string, { turn: number; runs: number; arrival: number }>();
  private turns = 0;
  private arrivals = 0;

  add(run: R, tenant: string): void {
    if (this.runs.has(run)) throw new Error('the run is already in progress');
    const arrival = this.arrivals++;
    this.runs.set(run, { tenant, turn: -1, arrival });
    const entry = this.tenants.get(tenant);
    if (entry) entry.runs++;
    // A tenant that comes back after its runs ended counts as new: what it had before is spent.
    else this.tenants.set(tenant, { turn: -1, runs: 1, arrival });
  }

  /** The run ended (answered, failed or cancelled): it takes no more turns. */
  remove(run: R): void {
    const entry = this.runs.get(run);
    if (!entry) return;
    this.runs.delete(run);
    const tenant = this.tenants.get(entry.tenant)!;
    if (--tenant.runs === 0) this.tenants.delete(entry.tenant);
  }

  /**
   * The first unit `ready` gives, asking the runs of the tenant whose last unit is oldest first
   * (its runs by their own last unit, then by arrival); undefined when no run has one ready.
   */
  next<U>(ready: (run: R) => U | undefined): { run: R; unit: U } | undefined {
    const order = [...this.runs].sort(([, a], [, b]) => {
      const [ta, tb] = [this.tenants.get(a.tenant)!, this.tenants.get(b.tenant)!];
      // Two new tenants have the same turn: the one that came first goes first, each one's runs together.
      return ta.turn - tb.turn || ta.arrival - tb.arrival || a.turn - b.turn || a.arrival - b.arrival;
    });
    for (const [run, entry] of order) {
      const unit = ready(run);
      if (unit === undefined) continue;
      entry.turn = this.turns;
      this.tenants.get(entry.tenant)!.turn = this.turns++;
      return { run, unit };
    }
    return undefined;
  }

  /** Runs in progress: of one tenant, or of all. */
  count(tenant?: string): number {
    return tenant === undefined ? this.runs.size : (this.tenants.get(tenant)?.runs ?? 0);
  }
}
