/**
 * How one simulation is cut into units of work that threads can share (pure bookkeeping,
 * docs/adr/0030-monte-carlo-threads.md).
 *
 * - Scenarios form blocks of BLOCK_SIZE, each with its own random stream (random.ts: blockStates).
 *   A scenario's numbers depend only on the seed and its block, never on who computes the block.
 * - Steps form chunks: a chunk ends when its sample dates fill half the row buffer or its cells
 *   (steps × scenarios × classes) reach CHUNK_CELLS. The values of a chunk's sample dates go to
 *   one half of the row buffer (chunk c: half c mod 2), one row of every scenario per date.
 * - A steps unit advances a range of whole blocks through a chunk's steps; a quantiles unit takes
 *   a range of a chunk's dates from their rows. Units of steps of chunk c wait for the same blocks'
 *   chunk c − 1 and for every quantiles unit of chunk c − 2 (which read the half they overwrite);
 *   quantiles of chunk c wait for all of chunk c's steps.
 *
 * How many ranges the blocks and dates are cut into (`parts`) changes the order of work, never a
 * number: each scenario is computed alone, and a date's quantiles are those of all its rows.
 */
import { stepCount, type Grid } from './grid.ts';

/** Scenarios per random stream. Part of what a seed means: changing it changes every answer. */
export const BLOCK_SIZE = 256;
/** Cells of one chunk: about 20–50 ms of one thread, so a cancelled run stops within about that. */
export const CHUNK_CELLS = 2_000_000;
/** Bytes of one half of the row buffer at most (but at least 2 rows, and no more rows than dates). */
export const HALF_BYTES = 8 << 20;

export const blockCount = (scenarios: number) => Math.ceil(scenarios / BLOCK_SIZE);

export type Chunk = {
  /** Steps firstStep ≤ k < endStep; step k moves from grid date k to grid date k + 1. */
  firstStep: number;
  endStep: number;
  /** Sample dates taken in this chunk (chunk 0 also holds date 0, the start). */
  firstDate: number;
  endDate: number;
};

export type RunPlan = {
  blocks: number;
  /** Rows of one half of the row buffer: max(2, min(dates, ⌊HALF_BYTES / (8 × scenarios)⌋)). */
  rows: number;
  chunks: Chunk[];
};

export function planRun(grid: Grid, scenarios: number, classes: number): RunPlan {
  const rows = Math.max(2, Math.min(grid.sampleDays.length, Math.floor(HALF_BYTES / (8 * scenarios))));
  const steps = stepCount(grid);
  const chunks: Chunk[] = [];
  let chunk: Chunk = { firstStep: 0, endStep: 0, firstDate: 0, endDate: 1 };
  for (let k = 0; k < steps; k++) {
    chunk.endStep = k + 1;
    if (grid.sample[k + 1]! >= 0) chunk.endDate = grid.sample[k + 1]! + 1;
    const cells = (chunk.endStep - chunk.firstStep) * scenarios * classes;
    if (k + 1 === steps || chunk.endDate - chunk.firstDate === rows || cells >= CHUNK_CELLS) {
      chunks.push(chunk);
      chunk = { firstStep: k + 1, endStep: k + 1, firstDate: chunk.endDate, endDate: chunk.endDate };
    }
  }
  return { blocks: blockCount(scenarios), rows, chunks };
}

export type StepsUnit = { kind: 'steps'; chunk: number; part: number; firstBlock: number; endBlock: number };
export type QuantilesUnit = { kind: 'quantiles'; chunk: number; firstDate: number; endDate: number };
export type Unit = StepsUnit | QuantilesUnit;

/** first ≤ i < end cut into at most `parts` ranges whose sizes differ by at most one. */
function ranges(first: number, end: number, parts: number): [number, number][] {
  const count = end - first;
  const n = Math.max(1, Math.min(parts, count));
  return Array.from({ length: n }, (_, i) => [first + Math.floor((i * count) / n), first + Math.floor(((i + 1) * count) / n)]);
}

/**
 * The units of one run and which of them may start: `next` hands out a unit whose inputs are
 * complete (quantiles first, as they free a half of the row buffer, then steps of the earliest
 * chunk), `done` records one that finished. Several units may be out at once.
 */
export class RunProgress {
  private readonly parts: [number, number][];
  /** Per part: the chunk its next steps unit is of, and whether one is out. */
  private readonly nextChunk: Int32Array;
  private readonly busy: Uint8Array;
  /** Per chunk: steps units not yet done, quantiles units not yet done. */
  private readonly stepsLeft: Int32Array;
  private readonly quantilesLeft: Int32Array;
  /** Per chunk: the date ranges of its quantiles units. */
  private readonly quantileRanges: [number, number][][];
  private readonly readyQuantiles: QuantilesUnit[] = [];
  private unitsLeft: number;

  constructor(
    private readonly plan: RunPlan,
    parts: number,
  ) {
    this.parts = ranges(0, plan.blocks, parts);
    this.nextChunk = new Int32Array(this.parts.length);
    this.busy = new Uint8Array(this.parts.length);
    const chunks = plan.chunks.length;
    this.stepsLeft = new Int32Array(chunks).fill(this.parts.length);
    this.quantileRanges = plan.chunks.map((c) => (c.endDate > c.firstDate ? ranges(c.firstDate, c.endDate, parts) : []));
    this.quantilesLeft = Int32Array.from(this.quantileRanges, (r) => r.length);
    this.unitsLeft = chunks * this.parts.length + this.quantilesLeft.reduce((a, b) => a + b, 0);
  }

  /** A unit that may start now, or undefined (none left, or all wait for units that are out). */
  next(): Unit | undefined {
    const q = this.readyQuantiles.shift();
    if (q) return q;
    let best = -1;
    for (let p = 0; p < this.parts.length; p++) {
      const c = this.nextChunk[p]!;
      if (this.busy[p] || c >= this.plan.chunks.length) continue;
      if (c >= 2 && this.quantilesLeft[c - 2]! > 0) continue;
      if (best < 0 || c < this.nextChunk[best]!) best = p;
    }
    if (best < 0) return undefined;
    this.busy[best] = 1;
    const [firstBlock, endBlock] = this.parts[best]!;
    return { kind: 'steps', chunk: this.nextChunk[best]!, part: best, firstBlock, endBlock };
  }

  done(unit: Unit): void {
    this.unitsLeft--;
    if (unit.kind === 'quantiles') {
      this.quantilesLeft[unit.chunk]!--;
      return;
    }
    this.busy[unit.part] = 0;
    this.nextChunk[unit.part]!++;
    if (--this.stepsLeft[unit.chunk]! === 0) {
      for (const [firstDate, endDate] of this.quantileRanges[unit.chunk]!)
        this.readyQuantiles.push({ kind: 'quantiles', chunk: unit.chunk, firstDate, endDate });
    }
  }

  /** Every unit done. */
  finished(): boolean {
    return this.unitsLeft === 0;
  }
}
