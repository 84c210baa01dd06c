// Runs the units of one simulation (run-plan.ts) on its arrays (run-state.ts): pure computation.
import { DAYS_PER_YEAR } from './dates.ts';
import type { SimulationInput } from './engine.ts';
import type { Grid } from './grid.ts';
import { stepCorrelated, stepIndependent, stepOne, stepTwo } from './kernels.ts';
import { isDiagonal, logParameters, parametersAt, psdCholesky } from './model.ts';
import { QuantileWork, quantilesInto } from './quantiles.ts';
import { NormalSource } from './random.ts';
import { BLOCK_SIZE, type QuantilesUnit, type RunPlan, type StepsUnit, type Unit } from './run-plan.ts';
import { blockScenarios, rowOffset, type RunArrays } from './run-state.ts';

/**
 * One thread's view of a run: the run's arrays plus its own scratch buffers (normals of a block,
 * per-step coefficients, the quantiles' work). A steps unit walks its chunk's steps; on each it
 * computes the step's coefficients, then per block draws the block's normals from the block's own
 * stream and applies the kernel, and at a sample date copies its scenarios' values to the date's
 * row. A quantiles unit takes each date's quantiles from its row of all scenarios.
 */
export class UnitRunner {
  private readonly n: number;
  private readonly l?: Float64Array;
  private readonly diagonal: boolean;
  private readonly eps: Float64Array;
  private readonly drift: Float64Array;
  /** diag(σ√Δt)·L, row-major lower triangle (the diagonal alone when independent). */
  private readonly a: Float64Array;
  private readonly sources: NormalSource[] = [];
  private readonly probabilities: Float64Array;
  /** Requested order → position among the sorted distinct probabilities. */
  private readonly position: number[];
  private readonly sorted: Float64Array;
  private work?: QuantileWork;

  constructor(
    private readonly input: SimulationInput,
    private readonly grid: Grid,
    private readonly plan: RunPlan,
    private readonly arrays: RunArrays,
  ) {
    const n = (this.n = input.weights.length);
    this.l = input.correlation ? psdCholesky(input.correlation, n) : undefined;
    if (input.correlation && !this.l) throw new Error('correlation matrix is not positive semi-definite');
    this.diagonal = !this.l || isDiagonal(this.l, n);
    this.eps = new Float64Array(BLOCK_SIZE * n);
    this.drift = new Float64Array(n);
    this.a = new Float64Array(n * n);
    this.probabilities = Float64Array.from(new Set(input.quantiles)).sort();
    this.position = input.quantiles.map((q) => this.probabilities.indexOf(q));
    this.sorted = new Float64Array(this.probabilities.length);
  }

  run(unit: Unit): void {
    if (Atomics.load(this.arrays.sync, 1) !== 0) return;
    Atomics.load(this.arrays.sync, 0);
    if (unit.kind === 'steps') this.steps(unit);
    else this.quantiles(unit);
    Atomics.add(this.arrays.sync, 0, 1);
  }

  private source(block: number): NormalSource {
    return (this.sources[block] ??= new NormalSource(this.arrays.rng.subarray(4 * block, 4 * block + 4)));
  }

  /** drift and a of step k: parameters at the step's middle, over its Δt. */
  private coefficients(k: number): void {
    const { input, grid, n, l, drift, a } = this;
    const dt = (grid.days[k + 1]! - grid.days[k]!) / DAYS_PER_YEAR;
    const mid = ((grid.days[k]! + grid.days[k + 1]!) / 2 - input.startDay) / DAYS_PER_YEAR;
    for (let i = 0; i < n; i++) {
      const { mu, sigma } = logParameters(parametersAt(input.shortTerm[i]!, input.longTerm[i]!, input.cutOffYears, mid));
      drift[i] = mu * dt;
      const vol = sigma * Math.sqrt(dt);
      for (let j = 0; j <= i; j++) a[i * n + j] = vol * (l ? l[i * n + j]! : i === j ? 1 : 0);
    }
  }

  private steps(unit: StepsUnit): void {
    const { input, grid, plan, n, eps, drift, a, diagonal } = this;
    const { value, rows, paths } = this.arrays;
    const N = input.scenarios;
    const w = input.weights;
    const chunk = plan.chunks[unit.chunk]!;
    const [first, end] = blockScenarios(unit.firstBlock, unit.endBlock, N);
    for (let k = chunk.firstStep; k < chunk.endStep; k++) {
      this.coefficients(k);
      const dep = grid.deposit[k + 1]!;
      for (let b = unit.firstBlock; b < unit.endBlock; b++) {
        const [from, to] = blockScenarios(b, b + 1, N);
        this.source(b).fill(eps, (to - from) * n);
        if (n === 1) stepOne(value, from, to, eps, drift[0]!, a[0]!, dep);
        else if (n === 2 && diagonal) stepTwo(value, from, to, eps, w, drift, a[0]!, 0, a[3]!, dep);
        else if (n === 2) stepTwo(value, from, to, eps, w, drift, a[0]!, a[2]!, a[3]!, dep);
        else if (diagonal) stepIndependent(value, from, to, eps, w, drift, a, n, dep);
        else stepCorrelated(value, from, to, eps, w, drift, a, n, dep);
      }
      const d = grid.sample[k + 1]!;
      if (d >= 0) {
        const taken = value.subarray(first, end);
        rows.set(taken, rowOffset(plan, unit.chunk, d, N) + first);
        paths?.set(taken, d * N + first);
      }
    }
  }

  private quantiles(unit: QuantilesUnit): void {
    const N = this.input.scenarios;
    const nq = this.input.quantiles.length;
    const { rows, values } = this.arrays;
    const work = (this.work ??= new QuantileWork(N, this.probabilities));
    for (let d = unit.firstDate; d < unit.endDate; d++) {
      const offset = rowOffset(this.plan, unit.chunk, d, N);
      quantilesInto(rows.subarray(offset, offset + N), work, this.sorted, 0);
      for (let q = 0; q < nq; q++) values[d * nq + q] = this.sorted[this.position[q]!]!;
    }
  }
}
