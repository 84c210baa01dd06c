import assert from 'node:assert/strict';
import fc from 'fast-check';
import { simulate, type SimulationInput } from '../src/simulation/engine.ts';
import { buildGrid, stepCount } from '../src/simulation/grid.ts';
import { blockStates, jump, NormalSource, seedState } from '../src/simulation/random.ts';
import { BLOCK_SIZE, CHUNK_CELLS, planRun, RunProgress, type RunPlan, type Unit } from '../src/simulation/run-plan.ts';
import { allocateRun, stopRun } from '../src/simulation/run-state.ts';
import { UnitRunner } from '../src/simulation/units.ts';
import { SHAPES } from './simulation-cases.ts';

// How a simulation is cut into units that threads share (docs/adr/0030-monte-carlo-threads.md), in
// process: each block's random stream, the chunks, the order in which units may run, and the
// same bytes whatever the number of parts and the order of the units. The same with real threads:
// simulation-threads.test.ts.

/** One xoshiro128** state transition (the output word is not needed). */
function advance(s: Int32Array): void {
  const t = s[1]! << 9;
  s[2]! ^= s[0]!;
  s[3]! ^= s[1]!;
  s[1]! ^= s[2]!;
  s[0]! ^= s[3]!;
  s[2]! ^= t;
  s[3] = (s[3]! << 11) | (s[3]! >>> 21);
}

/** A 128×128 matrix over GF(2) as its columns (4 words each) applied to a state. */
function apply(columns: Int32Array[], v: Int32Array): Int32Array {
  const out = new Int32Array(4);
  for (let j = 0; j < 128; j++) {
    if ((v[j >> 5]! >>> (j & 31)) & 1) for (let w = 0; w < 4; w++) out[w]! ^= columns[j]![w]!;
  }
  return out;
}

/** The steps of `input`'s run in `parts` parts, units taken and finished in an order `random` picks, on one runner per part. */
function runInAnyOrder(input: SimulationInput, parts: number, random: () => number) {
  const grid = buildGrid(input);
  const plan = planRun(grid, input.scenarios, input.weights.length);
  const arrays = allocateRun(input, grid, plan, 'local');
  const runners = Array.from({ length: parts }, () => new UnitRunner(input, grid, plan, arrays));
  const progress = new RunProgress(plan, parts);
  const out: Unit[] = [];
  for (;;) {
    for (let unit = progress.next(); unit && out.length < parts; unit = out.length < parts ? progress.next() : undefined) out.push(unit);
    if (out.length === 0) break;
    const [unit] = out.splice(Math.floor(random() * out.length), 1);
    runners[Math.floor(random() * parts)]!.run(unit!);
    progress.done(unit!);
  }
  assert.ok(progress.finished());
  return { values: arrays.values, paths: arrays.paths };
}

const bytes = (a?: Float64Array) => (a ? Buffer.from(a.buffer, a.byteOffset, a.byteLength).toString('hex') : undefined);

describe('Monte Carlo in blocks of scenarios', () => {
  describe('random streams', () => {
    it("jumps exactly 2^64 draws: the jump equals xoshiro128**'s transition matrix raised to 2^64", () => {
      let m: Int32Array[] = Array.from({ length: 128 }, (_, j) => {
        const e = new Int32Array(4);
        e[j >> 5] = 1 << (j & 31);
        advance(e);
        return e;
      });
      for (let i = 0; i < 64; i++) m = m.map((column) => apply(m, column));
      for (const seed of [0, 1, 42, 0xffff_ffff]) {
        const state = seedState(seed);
        const expected = apply(m, state);
        jump(state);
        assert.deepEqual(state, expected, `seed ${seed}`);
      }
    });

    it("gives block 0 the seed's own stream and block b the stream one jump after block b − 1's", () => {
      const states = blockStates(9, 4);
      assert.deepEqual(states.subarray(0, 4), seedState(9));
      for (let b = 1; b < 4; b++) {
        const previous = states.slice(4 * (b - 1), 4 * b);
        jump(previous);
        assert.deepEqual(states.subarray(4 * b, 4 * b + 4), previous);
      }
      // A source on a block's state draws that stream and advances the state where it lies.
      const [fromState, fromSeed] = [new Float64Array(1000), new Float64Array(1000)];
      const view = states.subarray(0, 4);
      new NormalSource(view).fill(fromState);
      new NormalSource(9).fill(fromSeed);
      assert.deepEqual(fromState, fromSeed);
      assert.notDeepEqual(view, seedState(9));
    });
  });

  describe('chunks', () => {
    it('cover every step and sample date once, in order, within the rows and about CHUNK_CELLS each; none depends on threads', () => {
      let withoutDates = 0;
      let byRows = 0;
      for (const { name, input } of SHAPES) {
        const grid = buildGrid(input);
        const cellsPerStep = input.scenarios * input.weights.length;
        const plan = planRun(grid, input.scenarios, input.weights.length);
        assert.equal(plan.blocks, Math.ceil(input.scenarios / BLOCK_SIZE), name);
        assert.equal(plan.rows, Math.max(2, Math.min(grid.sampleDays.length, Math.floor((8 << 20) / (8 * input.scenarios)))), name);
        let [step, date] = [0, 0];
        for (const chunk of plan.chunks) {
          assert.deepEqual([chunk.firstStep, chunk.firstDate], [step, date], name);
          assert.ok(chunk.endStep > chunk.firstStep, name);
          assert.ok(chunk.endDate - chunk.firstDate <= plan.rows, name);
          assert.ok((chunk.endStep - chunk.firstStep - 1) * cellsPerStep < CHUNK_CELLS, name);
          // Chunk 0 also holds date 0, the start.
          if (chunk.firstStep === 0) date = 1;
          for (let k = chunk.firstStep; k < chunk.endStep; k++) if (grid.sample[k + 1]! >= 0) assert.equal(grid.sample[k + 1], date++, name);
          assert.equal(chunk.endDate, date, name);
          if (chunk.endDate === chunk.firstDate) withoutDates++;
          if (chunk.endDate - chunk.firstDate === plan.rows) byRows++;
          step = chunk.endStep;
        }
        assert.deepEqual([step, date], [stepCount(grid), grid.sampleDays.length], name);
      }
      assert.ok(withoutDates > 0 && byRows > 0, 'the shapes include chunks without dates and chunks ended by their rows');
    });
  });

  describe('units', () => {
    it('are handed out once each, only once their inputs are complete (random plans, parts and orders of completion)', () => {
      const plans = fc
        .record({
          blocks: fc.integer({ min: 1, max: 9 }),
          rows: fc.integer({ min: 2, max: 4 }),
          dates: fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 7 }),
        })
        .map(({ blocks, rows, dates }): RunPlan => {
          let [step, date] = [0, 0];
          const chunks = dates.map((count, c) => {
            const taken = Math.min(rows, count + (c === 0 ? 1 : 0));
            const chunk = { firstStep: step, endStep: step + 3, firstDate: date, endDate: date + taken };
            [step, date] = [chunk.endStep, chunk.endDate];
            return chunk;
          });
          return { blocks, rows, chunks };
        });
      fc.assert(
        fc.property(plans, fc.integer({ min: 1, max: 5 }), fc.array(fc.nat(), { minLength: 200, maxLength: 200 }), (plan, parts, picks) => {
          const progress = new RunProgress(plan, parts);
          const stepsDone = new Map<string, number>();
          const quantilesOut = new Map<number, number>();
          const datesDone = new Set<number>();
          const blocksDone = plan.chunks.map(() => 0);
          const out: Unit[] = [];
          let pick = 0;
          for (;;) {
            for (let unit = progress.next(); unit; unit = progress.next()) {
              if (unit.kind === 'steps') {
                assert.equal(stepsDone.get(`${unit.firstBlock}`) ?? 0, unit.chunk, 'the same blocks finished the chunk before');
                if (unit.chunk >= 2) {
                  const { firstDate, endDate } = plan.chunks[unit.chunk - 2]!;
                  for (let d = firstDate; d < endDate; d++)
                    assert.ok(datesDone.has(d), 'the quantiles of chunk c − 2 read their half before it is overwritten');
                }
              } else {
                assert.equal(blocksDone[unit.chunk], plan.blocks, 'every block finished the chunk before its quantiles');
                quantilesOut.set(unit.chunk, (quantilesOut.get(unit.chunk) ?? 0) + 1);
              }
              out.push(unit);
            }
            if (out.length === 0) break;
            const [unit] = out.splice(picks[pick++ % picks.length]! % out.length, 1);
            if (unit!.kind === 'steps') {
              stepsDone.set(`${unit!.firstBlock}`, unit!.chunk + 1);
              blocksDone[unit!.chunk]! += unit!.endBlock - unit!.firstBlock;
            } else {
              for (let d = unit!.firstDate; d < unit!.endDate; d++) {
                assert.ok(!datesDone.has(d), 'each date once');
                datesDone.add(d);
              }
            }
            progress.done(unit!);
          }
          assert.ok(progress.finished());
          assert.deepEqual(
            blocksDone,
            plan.chunks.map(() => plan.blocks),
          );
          assert.equal(datesDone.size, plan.chunks.at(-1)!.endDate);
        }),
      );
    });

    it('answer the same bytes as simulate() whatever the number of parts and the order of the units', () => {
      let seed = 1;
      const random = () => (seed = (Math.imul(seed, 48271) >>> 0) % 0x7fffffff) / 0x7fffffff;
      for (const { name, input } of SHAPES) {
        const expected = simulate(input);
        for (const parts of [1, 2, 3, 5]) {
          const out = runInAnyOrder(input, parts, random);
          assert.equal(bytes(out.values), bytes(expected.values), `${name}: ${parts} parts`);
          assert.equal(bytes(out.paths), bytes(expected.paths), `${name}: ${parts} parts, paths`);
        }
      }
    });

    it('do nothing once their run is stopped (a thread may hold a unit of a cancelled run ahead)', () => {
      const input = SHAPES[0]!.input;
      const grid = buildGrid(input);
      const plan = planRun(grid, input.scenarios, input.weights.length);
      const arrays = allocateRun(input, grid, plan, 'local');
      const runner = new UnitRunner(input, grid, plan, arrays);
      const progress = new RunProgress(plan, 1);
      const first = progress.next()!;
      runner.run(first);
      progress.done(first);
      const [value, rng, values] = [arrays.value.slice(), arrays.rng.slice(), arrays.values.slice()];
      stopRun(arrays);
      const second = progress.next()!;
      assert.equal(second.kind, 'quantiles');
      runner.run(second);
      assert.deepEqual([arrays.value, arrays.rng, arrays.values], [value, rng, values]);
      assert.ok(
        values.every((v) => v === 0),
        'no quantile taken',
      );
      assert.notDeepEqual(value, allocateRun(input, grid, plan, 'local').value, 'the first unit did step');
    });

    it('draw each block from its own stream: a block answers the same whatever the other blocks, and another seed changes it', () => {
      const base = SHAPES[0]!.input;
      const paths = (input: SimulationInput) => simulate({ ...input, keepPaths: true }).paths!;
      const many = paths({ ...base, scenarios: 3 * BLOCK_SIZE });
      const one = paths({ ...base, scenarios: BLOCK_SIZE });
      const dates = many.length / (3 * BLOCK_SIZE);
      for (let d = 0; d < dates; d++) {
        assert.deepEqual(many.subarray(d * 3 * BLOCK_SIZE, d * 3 * BLOCK_SIZE + BLOCK_SIZE), one.subarray(d * BLOCK_SIZE, (d + 1) * BLOCK_SIZE));
      }
      const other = paths({ ...base, scenarios: BLOCK_SIZE, seed: base.seed + 1 });
      assert.notDeepEqual(other.subarray(-BLOCK_SIZE), one.subarray(-BLOCK_SIZE));
    });
  });
});
