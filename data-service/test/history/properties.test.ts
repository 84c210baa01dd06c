import assert from 'node:assert/strict';
import fc from 'fast-check';
import { historySeries } from '../../src/history/calculate.ts';
import type { HistoryFlow, HistoryVersion } from '../../src/history/input.ts';
import { fxTable, historyRequest, noon, priceTable, weekdays } from './fixtures.ts';

// Properties of the history calculator over random paths (docs/adr/0058-portfolio-history.md).

const near = (actual: number, expected: number, relative = 1e-9) =>
  assert.ok(Math.abs(actual - expected) <= relative * Math.max(1, Math.abs(expected)), `${actual} is not ${expected}`);

/**
 * A random path: a EUR instrument A and a USD instrument U, EUR and USD cash, prices and the USD
 * rate moving each day; on some days a trade (A sold for U or back at that day's values, which
 * changes no value) and some a deposit or withdrawal of EUR cash. Returns the request's pieces and
 * the holdings at the end of each day, to check the calculator against.
 */
type Held = { A: number; U: number; EUR: number; USD: number };
const holdingsOf = (h: Held) => ({ A: h.A, U: h.U, $EUR: h.EUR, $USD: h.USD });

const path = (withFlows: boolean) =>
  fc
    .record({
      n: fc.integer({ min: 2, max: 40 }),
      seedMoves: fc.array(fc.double({ min: -0.2, max: 0.2, noNaN: true }), { minLength: 120, maxLength: 120 }),
      trades: fc.array(fc.double({ min: -0.5, max: 0.5, noNaN: true }), { minLength: 40, maxLength: 40 }),
      flows: fc.array(fc.option(fc.integer({ min: -300, max: 1000 }), { freq: 3 }), { minLength: 40, maxLength: 40 }),
      start: fc.record({
        A: fc.integer({ min: 0, max: 50 }),
        U: fc.integer({ min: 0, max: 50 }),
        EUR: fc.integer({ min: 1, max: 2000 }),
        USD: fc.integer({ min: 0, max: 500 }),
      }),
    })
    .map(({ n, seedMoves, trades, flows, start }) => {
      const days = weekdays('2026-03-02', n);
      const a = [100];
      const u = [40];
      const usd = [0.9];
      for (let t = 1; t < n; t++) {
        a.push(a[t - 1]! * (1 + seedMoves[t]!));
        u.push(u[t - 1]! * (1 + seedMoves[40 + t]!));
        usd.push(usd[t - 1]! * (1 + seedMoves[80 + t]! / 4));
      }
      const held = [{ ...start }];
      const versions: HistoryVersion[] = [{ from: noon(days[0]!), holdings: holdingsOf(start) }];
      const flowList: HistoryFlow[] = [];
      for (let t = 1; t < n; t++) {
        const h = { ...held[t - 1]! };
        const q = trades[t]!;
        if (q > 0) {
          const sold = h.A * q;
          h.A -= sold;
          h.U += (sold * a[t]!) / (u[t]! * usd[t]!);
        } else if (q < 0) {
          const sold = h.U * -q;
          h.U -= sold;
          h.A += (sold * u[t]! * usd[t]!) / a[t]!;
        }
        const f = withFlows ? (flows[t] ?? 0) : 0;
        const amount = Math.max(f, -h.EUR);
        if (amount !== 0) {
          h.EUR += amount;
          flowList.push({ at: noon(days[t]!), amount: String(amount), currency: 'EUR' });
        }
        held.push(h);
        if (q !== 0 || amount !== 0) versions.push({ from: noon(days[t]!), holdings: holdingsOf(h) });
      }
      const request = historyRequest(days, { versions, flows: flowList });
      const prices = priceTable(days, { A: { closes: a }, U: { closes: u, currency: 'USD' } });
      return { request, prices, fx: fxTable({ USD: usd }), held, a, u, usd, flowList };
    });

describe('portfolio history: properties', () => {
  it('final value = start value + flows + daily gains of the holdings, computed apart from the value', () => {
    fc.assert(
      fc.property(path(true), ({ request, prices, fx, held, a, u, usd, flowList }) => {
        const { daily } = historySeries(request, prices, fx);
        const n = held.length;
        let gains = 0;
        for (let t = 1; t < n; t++) {
          const h = held[t - 1]!;
          gains += h.A * (a[t]! - a[t - 1]!) + h.U * (u[t]! * usd[t]! - u[t - 1]! * usd[t - 1]!) + h.USD * (usd[t]! - usd[t - 1]!);
        }
        const flows = flowList.reduce((sum, f) => sum + Number(f.amount), 0);
        near(daily.value[n - 1]!, daily.value[0]! + flows + gains);
        near(daily.netDeposits[n - 1]!, flows);
      }),
      { numRuns: 300 },
    );
  });

  it('without flows, the cumulative time-weighted return is V_end / V_start − 1', () => {
    fc.assert(
      fc.property(path(false), ({ request, prices, fx }) => {
        const { daily } = historySeries(request, prices, fx);
        const n = daily.value.length;
        near(daily.index[n - 1]! - 1, daily.value[n - 1]! / daily.value[0]! - 1);
      }),
      { numRuns: 300 },
    );
  });

  it('a deposit of cash moved to another day of a window where no price moves leaves the TWR unchanged', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 6, max: 30 }),
        fc.array(fc.double({ min: -0.1, max: 0.1, noNaN: true }), { minLength: 30, maxLength: 30 }),
        fc.integer({ min: 1, max: 10_000 }),
        fc.nat(),
        fc.nat(),
        fc.nat(),
        (n, moves, amount, w, x, y) => {
          const days = weekdays('2026-06-01', n);
          // Prices are flat from `start` to `end`; the deposit lands on one of the days after `start`.
          const start = 1 + (w % (n - 3));
          const end = start + 1 + (x % (n - start - 1));
          const closes = [50];
          for (let t = 1; t < n; t++) closes.push(t > start && t <= end ? closes[t - 1]! : closes[t - 1]! * (1 + moves[t]!));
          const prices = priceTable(days, { A: { closes } });
          const twrWith = (on: number) => {
            const request = historyRequest(days, {
              versions: [
                { from: noon(days[0]!), holdings: { A: 20 } },
                { from: noon(days[on]!), holdings: { A: 20, $EUR: amount } },
              ],
              flows: [{ at: noon(days[on]!), amount: String(amount), currency: 'EUR' }],
            });
            return historySeries(request, prices, fxTable()).daily.index;
          };
          const first = twrWith(start + 1);
          const other = twrWith(start + 1 + (y % (end - start)));
          near(other[n - 1]!, first[n - 1]!, 1e-12);
          // Up to the window's end the deposit changes nothing at all: it earned nothing, and it is no gain.
          const without = historySeries(historyRequest(days, { versions: [{ from: noon(days[0]!), holdings: { A: 20 } }] }), prices, fxTable()).daily.index;
          near(first[end]!, without[end]!, 1e-12);
        },
      ),
      { numRuns: 300 },
    );
  });
});
