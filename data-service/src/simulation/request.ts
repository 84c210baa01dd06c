import { ownValue } from '@platform/shared';
import type { components } from '@platform/api-types/data';
import { InvalidValue, type Loc } from '../domain/errors.ts';
import { FREQUENCIES, formatDay, nthDate, parseDay, type Frequency } from './dates.ts';
import type { SimulationInput } from './engine.ts';
import { buildGrid, stepCount, type Grid } from './grid.ts';
import { bandWeights, psdCholesky, type MeanAndStdev } from './model.ts';

export type FuturePerformanceRequest = components['schemas']['FuturePerformanceRequest'];

export type SimulationLimits = {
  /** Largest scenarios × steps × asset classes of one request (SIMULATION_MAX_CELLS). */
  maxCells: number;
};

/** Numbers in an answer (sample dates × quantiles) above which a request is refused: about 12 MB of JSON. */
export const MAX_ANSWER_VALUES = 1_000_000;
export const DEFAULT_QUANTILES = [0.05, 0.5, 0.95];
export const DEFAULT_SCENARIOS = 10_000;
/** Not in the contract: monthly deposits and monthly samples when a request names no frequency. */
export const DEFAULT_FREQUENCY: Frequency = 'M';
const DEFAULT_CUT_OFF_YEARS = 10;
const MAX_YEARS = 100;

/**
 * A checked request: the simulation without its asset-class parameters, and where these come from
 * (the request itself, or the price history of the mapped instruments).
 */
export type SimulationPlan = {
  classes: string[];
  /** Everything but the parameters; `seed` is the request's or a random one. */
  base: Omit<SimulationInput, 'shortTerm' | 'longTerm' | 'cutOffYears' | 'correlation'>;
  grid: Grid;
  source:
    | { kind: 'expected'; shortTerm: MeanAndStdev[]; longTerm: MeanAndStdev[]; cutOffYears: number; correlation?: Float64Array }
    | { kind: 'historical'; isins: string[] };
};

const fail = (loc: Loc, msg: string): never => {
  throw new InvalidValue(loc, msg);
};

/**
 * Checks what the contract's schema cannot (dates in order, bands, parameters of every class, a
 * positive semi-definite correlation matrix, the size limits) and repeats its range checks, so the
 * engine never sees a bad value whatever calls it. Every refusal names the offending value's `loc`.
 */
export function planSimulation(request: FuturePerformanceRequest, limits: SimulationLimits, randomSeed: () => number): SimulationPlan {
  const body = (...path: (string | number)[]): Loc => ['body', ...path];
  const classes = Object.keys(request.asset_classes ?? {});
  if (classes.length === 0) fail(body('asset_classes'), 'name at least one asset class');
  const bands = classes.map((name) => {
    const band = request.asset_classes[name]!;
    const [lower, upper] = band;
    if (band.length !== 2 || !(lower! >= 0 && upper! <= 1)) fail(body('asset_classes', name), 'must be [lower, upper] with weights between 0 and 1');
    if (lower! > upper!) fail(body('asset_classes', name), `lower weight ${lower} is above upper weight ${upper}`);
    return [lower!, upper!] as const;
  });
  const weights = bandWeights(bands) ?? fail(body('asset_classes'), 'every band is [0, 0]: the weights cannot be normalised');

  const startDay = parseDay(request.start_date) ?? fail(body('start_date'), 'must be a date YYYY-MM-DD');
  const endDay = parseDay(request.end_date) ?? fail(body('end_date'), 'must be a date YYYY-MM-DD');
  if (endDay <= startDay) fail(body('end_date'), `must be after start_date ${request.start_date}`);
  if (endDay > nthDate(startDay, 'Y', MAX_YEARS)) fail(body('end_date'), `must be at most ${MAX_YEARS} years after start_date`);

  const frequency = (name: 'recurring_deposit_frequency' | 'sample_frequency'): Frequency => {
    const value = request[name] ?? DEFAULT_FREQUENCY;
    if (!FREQUENCIES.includes(value)) fail(body(name), `must be one of ${FREQUENCIES.join(', ')}`);
    return value;
  };
  const finite = (name: 'start_amount' | 'recurring_deposit_amount', min = -Infinity) => {
    const value = request[name] ?? 0;
    if (!Number.isFinite(value) || value < min) fail(body(name), min === 0 ? 'must be a number of at least 0' : 'must be a number');
    return value;
  };
  if (request.amount_currency !== undefined && request.currency === undefined)
    fail(body('amount_currency'), 'needs currency: the currency the amounts are converted to and the answer is in');
  const quantiles = request.quantiles ?? DEFAULT_QUANTILES;
  if (quantiles.length === 0) fail(body('quantiles'), 'name at least one quantile');
  quantiles.forEach((q, i) => {
    if (!(q > 0 && q < 1)) fail(body('quantiles', i), 'must be between 0 and 1 (exclusive)');
  });
  const scenarios = request.scenarios ?? DEFAULT_SCENARIOS;
  if (!Number.isInteger(scenarios) || scenarios < 1 || scenarios > 100_000) fail(body('scenarios'), 'must be an integer from 1 to 100000');
  const seed = request.seed ?? randomSeed();
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffff_ffff) fail(body('seed'), 'must be an integer from 0 to 4294967295');

  const base = {
    weights,
    startDay,
    endDay,
    startAmount: finite('start_amount', 0),
    depositAmount: finite('recurring_deposit_amount'),
    depositFrequency: frequency('recurring_deposit_frequency'),
    sampleFrequency: frequency('sample_frequency'),
    quantiles,
    scenarios,
    seed,
  };
  const grid = buildGrid(base);
  const cells = scenarios * stepCount(grid) * classes.length;
  if (cells > limits.maxCells) {
    fail(
      body('scenarios'),
      `${scenarios} scenarios × ${stepCount(grid)} steps × ${classes.length} asset classes = ${cells} exceeds this service's limit of ${limits.maxCells}; ask for fewer scenarios, a shorter period or less frequent samples and deposits`,
    );
  }
  const answerValues = grid.sampleDays.length * quantiles.length;
  if (answerValues > MAX_ANSWER_VALUES) {
    fail(
      body('sample_frequency'),
      `${grid.sampleDays.length} sample dates (${formatDay(startDay)} to ${formatDay(endDay)}) × ${quantiles.length} quantiles exceed ${MAX_ANSWER_VALUES} answer values; sample less often`,
    );
  }

  if (request.use_expected_returns === false) {
    const mapping = request.asset_class_mapping ?? {};
    const isins = classes.map(
      (name) => ownValue(mapping, name) ?? fail(body('asset_class_mapping', name), 'historical returns need an instrument (ISIN) for every asset class'),
    );
    return { classes, base, grid, source: { kind: 'historical', isins } };
  }
  const parameters = (field: 'asset_class_st_mean_and_stdev' | 'asset_class_lt_mean_and_stdev', name: string, given?: MeanAndStdev): MeanAndStdev => {
    const p = ownValue(request[field], name) ?? given ?? fail(body(field, name), 'expected returns need a {mean, stdev} for every asset class');
    if (!(Number.isFinite(p.mean) && p.mean > -1)) fail(body(field, name, 'mean'), 'must be a number above -1 (a loss of at most 100 %)');
    if (!(Number.isFinite(p.stdev) && p.stdev >= 0)) fail(body(field, name, 'stdev'), 'must be a number of at least 0');
    return { mean: p.mean, stdev: p.stdev };
  };
  const shortTerm = classes.map((name) => parameters('asset_class_st_mean_and_stdev', name));
  const longTerm = classes.map((name, i) => parameters('asset_class_lt_mean_and_stdev', name, shortTerm[i]));
  const cutOffYears = request.short_to_long_term_transition_cut_off ?? DEFAULT_CUT_OFF_YEARS;
  if (!Number.isInteger(cutOffYears) || cutOffYears < 0 || cutOffYears > MAX_YEARS)
    fail(body('short_to_long_term_transition_cut_off'), `must be an integer from 0 to ${MAX_YEARS}`);
  const correlation = correlationMatrix(request.asset_class_correlations, classes);
  return { classes, base, grid, source: { kind: 'expected', shortTerm, longTerm, cutOffYears, correlation } };
}

/**
 * The correlation matrix of `asset_class_correlations` over the request's classes: symmetric (a
 * pair given both ways must agree), 1 on the diagonal, 0 where no pair is given, positive
 * semi-definite. Entries naming a class outside `asset_classes` are ignored. Undefined when no
 * pair is given (independent classes).
 */
function correlationMatrix(given: FuturePerformanceRequest['asset_class_correlations'], classes: string[]): Float64Array | undefined {
  if (!given) return undefined;
  const n = classes.length;
  const index = new Map(classes.map((name, i) => [name, i]));
  const c = new Float64Array(n * n);
  const set = new Uint8Array(n * n);
  for (let i = 0; i < n; i++) c[i * n + i] = 1;
  let any = false;
  for (const [a, row] of Object.entries(given)) {
    for (const [b, rho] of Object.entries(row ?? {})) {
      const [i, j] = [index.get(a), index.get(b)];
      if (i === undefined || j === undefined) continue;
      const loc: Loc = ['body', 'asset_class_correlations', a, b];
      if (!(Number.isFinite(rho) && rho >= -1 && rho <= 1)) fail(loc, 'must be a correlation between -1 and 1');
      if (i === j) {
        if (rho !== 1) fail(loc, 'the correlation of a class with itself is 1');
        continue;
      }
      if (set[i * n + j] && c[i * n + j] !== rho) fail(loc, `disagrees with the correlation ${c[i * n + j]} given for ${b} and ${a}`);
      c[i * n + j] = c[j * n + i] = rho;
      set[i * n + j] = set[j * n + i] = 1;
      any = true;
    }
  }
  if (!any) return undefined;
  if (!psdCholesky(c, n))
    fail(['body', 'asset_class_correlations'], 'the correlation matrix is not positive semi-definite (no set of returns can have these correlations)');
  return c;
}
