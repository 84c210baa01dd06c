import assert from 'node:assert/strict';
import { tableFromIPC } from 'apache-arrow';
import { InvalidValue } from '../../src/domain/errors.ts';
import { historyToArrow } from '../../src/history/arrow.ts';
import { portfolioHistory } from '../../src/history/calculate.ts';
import { fxTable, historyRequest, noon, priceTable, weekdays } from './fixtures.ts';

// Which days a period shows (docs/adr/0058-portfolio-history.md, "Days"): its business days from
// `from` to `to`, none after the reference data's last close; none at all is an empty answer.

describe('portfolio history: the days of a period', () => {
  const days = weekdays('2026-01-05', 10); // Mon 5 … Fri 16 January
  const prices = priceTable(days, { A: { closes: [100, 101, 102, 103, 104, 105, 106, 107, 108, 109] } });
  const held = { versions: [{ from: '2026-01-03T10:00:00Z', holdings: { A: 1 } }] };

  it('answers a period without a business day (a weekend) with no points and a summary of nulls', () => {
    const answer = portfolioHistory(historyRequest(days, { ...held, from: '2026-01-10', to: '2026-01-11' }), prices, fxTable());
    assert.deepEqual(answer.points, []);
    assert.deepEqual(Object.values(answer.summary), [null, null, null, null, null, null]);
    const arrow = tableFromIPC(historyToArrow(answer));
    assert.equal(arrow.numRows, 0);
    assert.deepEqual(JSON.parse(arrow.schema.metadata.get('summary')!), answer.summary);
  });

  it('starts on the first business day on or after a from on a weekend', () => {
    const answer = portfolioHistory(historyRequest(days, { ...held, from: '2026-01-10', to: '2026-01-13' }), prices, fxTable());
    assert.deepEqual(
      answer.points.map((p) => [p.date, p.value]),
      [
        ['2026-01-12', 105],
        ['2026-01-13', 106],
      ],
    );
    assert.equal(answer.summary.start_value, 105);
  });

  it("ends at the reference data's last close: a close is not carried into days not yet priced", () => {
    const request = historyRequest(days, held);
    const answer = portfolioHistory(request, { ...prices, lastClose: days[6]! }, fxTable());
    assert.equal(answer.points.at(-1)!.date, '2026-01-13');
    assert.equal(answer.summary.end_value, 106);
    const after = portfolioHistory({ ...request, from: '2026-01-14' }, { ...prices, lastClose: days[6]! }, fxTable());
    assert.deepEqual(after.points, [], 'a period after the last close has no points');
  });

  it('still refuses to before from, at to', () =>
    assert.throws(
      () => portfolioHistory(historyRequest(days, { ...held, from: '2026-01-12', to: '2026-01-09' }), prices, fxTable()),
      (e: unknown) => e instanceof InvalidValue && e.loc.join('.') === 'to',
    ));

  it('counts a flow on a weekend before the first business day in the start value', () => {
    const answer = portfolioHistory(
      historyRequest(days, {
        versions: [{ from: noon(days[4]! + 1), holdings: { $EUR: 50 } }],
        flows: [{ at: noon(days[4]! + 1), amount: '50', currency: 'EUR' }],
        from: '2026-01-10',
        to: '2026-01-12',
      }),
      prices,
      fxTable(),
    );
    assert.deepEqual(
      answer.points.map((p) => [p.date, p.value, p.net_deposits]),
      [['2026-01-12', 50, 0]],
    );
  });
});
