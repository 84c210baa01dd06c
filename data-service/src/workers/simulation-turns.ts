/**
 * Whose unit a free simulation thread takes next (pure bookkeeping, docs/adr/0030-monte-carlo-threads.md):
 * fair share over recent time. Each tenant's usage is the units handed to it, each one's weight
 * halving every `halfLifeMs` since it was handed out; the next unit goes to the tenant with a unit
 * ready and the least usage, on a tie to the one whose last unit was handed out longest ago
 * (a tenant that never had one first, by arrival), and within a tenant to its run whose last unit
 * was. So a tenant that arrives beside another's burst gets every unit it has ready until its
 * usage catches up with the burst's decayed usage; a tenant with many runs gets no more than one
 * with one; and two tenants that both keep the threads busy converge to equal shares.
 *
 * `next` asks the runs in that order for a unit that may start (a run's units wait for each other:
 * simulation/run-plan.ts); a run or tenant with none ready is passed over, so the threads never
 * idle while any run has a unit ready. A tenant keeps its usage after its runs end (its next run
 * does not start afresh) until it has decayed below FORGET_BELOW.
 */

/** Half-life of a unit's weight in a tenant's usage, unless configured (SIMULATION_FAIR_SHARE_HALF_LIFE_SECONDS). */
export const DEFAULT_HALF_LIFE_MS = 30_000;
/** Usage (units) below which a tenant with no run in progress is forgotten: it counts as new again. */
export const FORGET_BELOW = 1e-3;

export type TurnsOptions = {
  halfLifeMs?: number;
  /** Milliseconds on any monotonic scale: injected so that the rule is tested without timing. */
  now?: () => number;
};

type TenantEntry = {
  /** Usage as of `at`: decays by half every half-life after it. */
  usage: number;
  at: number;
  /** Order number of its last unit (−1: none yet), runs in progress, when it came. */
  turn: number;
  runs: number;
  arrival: number;
};

export class SimulationTurns<R> {
  /** Per run: its tenant, the order number of its last unit (−1: none yet), when it came. */
  private readonly runs = new Map<R, { tenant: string; turn: number; arrival: number }>();
  private readonly tenants = new Map<string, TenantEntry>();
  private readonly halfLifeMs: number;
  private readonly now: () => number;
  private turns = 0;
  private arrivals = 0;

  constructor(options: TurnsOptions = {}) {
    const { halfLifeMs = DEFAULT_HALF_LIFE_MS, now = () => performance.now() } = options;
    if (!(halfLifeMs > 0) || !Number.isFinite(halfLifeMs)) throw new RangeError(`halfLifeMs must be a positive number, not ${halfLifeMs}`);
    this.halfLifeMs = halfLifeMs;
    this.now = now;
  }

  add(run: R, tenant: string): void {
    if (this.runs.has(run)) throw new Error('the run is already in progress');
    const arrival = this.arrivals++;
    this.runs.set(run, { tenant, turn: -1, arrival });
    const entry = this.tenants.get(tenant);
    if (entry) entry.runs++;
    else this.tenants.set(tenant, { usage: 0, at: this.now(), turn: -1, runs: 1, arrival });
  }

  /** The run ended (answered, failed or cancelled): it takes no more turns; its tenant keeps its usage. */
  remove(run: R): void {
    const entry = this.runs.get(run);
    if (!entry) return;
    this.runs.delete(run);
    this.tenants.get(entry.tenant)!.runs--;
  }

  /**
   * The first unit `ready` gives, asking the runs of the tenant with the least usage first (see
   * above); undefined when no run has one ready. The unit is charged to its tenant.
   *
   * `ahead`: the unit is for a thread that is running one already, to hold until that one ends.
   * Only the tenant first in turn may have it: another tenant's unit held there would run before
   * the first tenant's next unit, which is usually not ready only because its previous one is
   * still running, and the first tenant would get every other unit of each thread whatever its
   * usage. A thread with nothing to run takes any tenant's unit.
   */
  next<U>(ready: (run: R) => U | undefined, ahead = false): { run: R; unit: U } | undefined {
    const at = this.now();
    const usage = new Map<string, number>();
    for (const [tenant, entry] of this.tenants) {
      const now = this.decayed(entry, at);
      if (entry.runs === 0 && now < FORGET_BELOW) this.tenants.delete(tenant);
      else usage.set(tenant, now);
    }
    const order = [...this.runs].sort(([, a], [, b]) => {
      const [ta, tb] = [this.tenants.get(a.tenant)!, this.tenants.get(b.tenant)!];
      return usage.get(a.tenant)! - usage.get(b.tenant)! || ta.turn - tb.turn || ta.arrival - tb.arrival || a.turn - b.turn || a.arrival - b.arrival;
    });
    const first = order[0]?.[1].tenant;
    for (const [run, entry] of order) {
      if (ahead && entry.tenant !== first) break;
      const unit = ready(run);
      if (unit === undefined) continue;
      const tenant = this.tenants.get(entry.tenant)!;
      tenant.usage = usage.get(entry.tenant)! + 1;
      tenant.at = at;
      entry.turn = this.turns;
      tenant.turn = this.turns++;
      return { run, unit };
    }
    return undefined;
  }

  /** A tenant's usage now, in units (0 for a tenant not known): tests and diagnostics. */
  usage(tenant: string): number {
    const entry = this.tenants.get(tenant);
    return entry ? this.decayed(entry, this.now()) : 0;
  }

  /** Runs in progress: of one tenant, or of all. */
  count(tenant?: string): number {
    return tenant === undefined ? this.runs.size : (this.tenants.get(tenant)?.runs ?? 0);
  }

  private decayed(entry: TenantEntry, at: number): number {
    return at <= entry.at ? entry.usage : entry.usage * 2 ** (-(at - entry.at) / this.halfLifeMs);
  }
}
