// Portfolio optimizer engine: a request and the store's facts become an outcome, solved by HiGHS
// (WebAssembly, loaded once) and checked before it is answered (docs/adr/0020-optimizer-model.md).
import highsPackage from 'highs';
import { fromNumber } from '@platform/shared';
import { checkOrders, shortfall } from './checks.ts';
import {
  drift,
  failure,
  infeasible,
  isRecommended,
  notOptimized,
  prepare,
  type InstrumentFacts,
  type OptimizerRequest,
  type Outcome,
  type Problem,
} from './problem.ts';
import { buildProgram, ordersOf, resultOrders } from './program.ts';

export type { InstrumentFacts, OptimizerRequest, OptimizerResult, Outcome } from './problem.ts';

/** Solves one request. `instruments` holds the facts of every ISIN the store knows among the request's holdings and model portfolio. */
export type Optimizer = (request: OptimizerRequest, instruments: ReadonlyMap<string, InstrumentFacts>) => Outcome;

/**
 * The solver's answer to one program: its model status, whether it carries a solution (a time
 * limit may stop the search after a solution was found) and the value of a column by name.
 */
export type SolverAnswer = { status: string; solved: boolean; value: (column: string) => number };
/** Solves a program in CPLEX LP text, stopping a whole-share search within `gap` (base currency) of the best bound; may throw. */
export type Solve = (program: string, gap: number) => SolverAnswer;

export type OptimizerOptions = {
  /** Seconds one solve may search (default 0.5); solves are synchronous and block the event loop meanwhile. */
  timeLimitSeconds?: number;
};

type HighsOptions = Parameters<Awaited<ReturnType<typeof highsPackage.default>>['solve']>[1];

/**
 * Quiet, and without the whole-share heuristics that cost more than they find here: feasibility
 * jump (a fixed ~3 ms per solve) and the RINS/RENS sub-searches (the long tail when a band or the
 * cash binds). The search still stops only within the gap of the best bound or at the time limit.
 * Option names newer than the package's option type are accepted by the solver.
 */
const SOLVER_OPTIONS = {
  output_flag: false,
  log_to_console: false,
  mip_heuristic_run_feasibility_jump: false,
  mip_heuristic_run_rins: false,
  mip_heuristic_run_rens: false,
} as HighsOptions;

// The package's types describe its CommonJS build (the loader under `default`); importing its ES
// module build gives the loader itself.
const loadHighs = (typeof highsPackage === 'function' ? highsPackage : highsPackage.default) as unknown as typeof highsPackage.default;

/** Loads the solver (WebAssembly) once; the returned function is synchronous. */
export async function loadOptimizer(options: OptimizerOptions = {}): Promise<Optimizer> {
  const highs = await loadHighs();
  const timeLimit = options.timeLimitSeconds ?? 0.5;
  const solve: Solve = (program, gap) => {
    const answer = highs.solve(program, { ...SOLVER_OPTIONS, time_limit: timeLimit, mip_abs_gap: gap });
    const columns = answer.Columns as Record<string, { Primal?: number } | undefined>;
    // Without a solution the objective is infinite (and the columns carry no meaningful values).
    return { status: answer.Status, solved: Number.isFinite(answer.ObjectiveValue), value: (column) => columns[column]?.Primal ?? 0 };
  };
  return (request, instruments) => optimize(solve, request, instruments, timeLimit);
}

const INFEASIBLE_STATUSES = new Set(['Infeasible', 'Primal infeasible or unbounded']);
/** A slack below half a cent is rounding, not a constraint that cannot hold. */
const NAMED_SLACK = 0.005;

function message(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split('\n')[0]!.slice(0, 300);
}

/**
 * The solver's values when they can be used: an optimum, or the best solution found before the
 * time limit (checked like any other answer); otherwise the FAILURE to answer.
 */
function usable(answer: SolverAnswer, timeLimit: number | undefined): Outcome | undefined {
  if (answer.status === 'Optimal' || (answer.status === 'Time limit reached' && answer.solved)) return undefined;
  if (answer.status === 'Time limit reached') return failure(`solver found no answer within its time limit of ${timeLimit ?? '?'} s`);
  return failure(`solver answered ${answer.status}`);
}

/** One request with a given solver (tests pass their own to see how answers are checked). */
export function optimize(solve: Solve, request: OptimizerRequest, instruments: ReadonlyMap<string, InstrumentFacts>, timeLimit?: number): Outcome {
  const prepared = prepare(request, instruments);
  if (prepared.outcome) return prepared.outcome;
  const problem = prepared.problem;
  try {
    let orders: Map<string, number>;
    if (problem.sellEverything) {
      // The only answer: every share sold (a whole fractional holding too), nothing bought.
      orders = new Map(problem.instruments.filter((i) => i.held > 0).map((i) => [i.isin, -i.held]));
    } else {
      const program = buildProgram(problem);
      if (program.unmet.length > 0) return explain(solve, problem, timeLimit);
      if (!program.trades) orders = new Map();
      else {
        const answer = solve(program.text, program.gap);
        if (INFEASIBLE_STATUSES.has(answer.status)) return explain(solve, problem, timeLimit);
        const refused = usable(answer, timeLimit);
        if (refused) return refused;
        orders = ordersOf(problem, answer.value);
      }
    }
    const violations = checkOrders(problem, orders);
    if (violations.length > 0) return failure(`solver answer violates ${violations.join('; ')}`);
    if (orders.size === 0) return notOptimized(`holdings already match the policy (drift ${(drift(problem) * 100).toFixed(2)}%)`);
    return { status: 'SUCCESS', is_recommended: isRecommended(problem), orders: resultOrders(problem, orders) };
  } catch (error) {
    return failure(`solver error: ${message(error)}`);
  }
}

/** INFEASIBLE naming the constraints that cannot hold: those with a slack in the elastic copy's answer. */
function explain(solve: Solve, problem: Problem, timeLimit: number | undefined): Outcome {
  const elastic = buildProgram(problem, true);
  const answer = solve(elastic.text, elastic.gap);
  const refused = usable(answer, timeLimit);
  if (refused) return refused;
  const slacks = [...elastic.slacks].map(([column, constraint]) => ({ constraint, amount: answer.value(column) })).filter((s) => s.amount > 0);
  const named = slacks.filter((s) => s.amount >= NAMED_SLACK);
  const shown = named.length > 0 ? named : slacks.sort((a, b) => b.amount - a.amount).slice(0, 1);
  const whole = problem.fractional ? '' : ' (whole shares)';
  if (shown.length === 0) return infeasible(`the cash constraint and the asset class bands cannot all hold${whole}`);
  return infeasible(shown.map((s) => shortfall(problem, s.constraint, fromNumber(s.amount))).join('; ') + whole);
}
