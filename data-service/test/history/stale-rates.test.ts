import assert from 'node:assert/strict';
import { UnknownValue } from '../../src/domain/errors.ts';
import { portfolioHistory } from '../../src/history/calculate.ts';
import type { FxAges, FxLeg, HistoryRequest } from '../../src/history/input.ts';
import { fxLeg, fxTable, historyRequest, noon, priceTable, weekdays } from './fixtures.ts';

// A rate older than FX_MAX_AGE_DAYS on a day it converts something is refused, never carried on
// (docs/adr/0057-fx-rates.md, docs/adr/0058-portfolio-history.md).

describe('portfolio history: stale exchange rates', () => {
  const days = weekdays('2026-01-05', 10); // Mon 5 … Fri 16 January
  const prices = priceTable(days, { US1: { closes: Array.from(days, () => 10), currency: 'USD' } });
  // USD published on Monday 5 and Tuesday 13 only: on Monday 12 the rate in use is 7 days old.
  const usd = fxLeg(days, 'USD', ['2026-01-05', '2026-01-13']);
  const table = fxTable({ USD: Array.from(days, () => 0.9) });
  const ages = (maxAgeDays: number, legs: FxLeg[] = [usd]): FxAges => ({ maxAgeDays, legs: new Map([['USD', legs]]) });
  const holding = (over: Partial<HistoryRequest> = {}) => historyRequest(days, { versions: [{ from: noon(days[0]!), holdings: { US1: 5 } }], ...over });

  const refused = (request: HistoryRequest, limits: FxAges, loc: (string | number)[], message: string) => {
    const before = JSON.stringify(request);
    assert.throws(
      () => portfolioHistory(request, prices, table, limits),
      (e: unknown) => e instanceof UnknownValue && assert.deepEqual(e.loc, loc) === undefined && assert.equal(e.msg, message) === undefined,
    );
    assert.equal(JSON.stringify(request), before, 'the request is left as it was');
  };

  it('refuses a holding on the first day its rate is older than the limit, naming the pair and dates', () =>
    refused(holding(), ages(6), ['versions', 0, 'holdings', 'US1'], 'EUR/USD rate of 2026-01-05 is older than 6 days on 2026-01-12 (for USD/EUR)'));

  it('accepts a rate exactly as old as the limit', () => {
    const answer = portfolioHistory(holding(), prices, table, ages(7));
    assert.equal(answer.points.length, days.length);
    assert.equal(answer.points[5]!.value, 45, 'the 7-day-old rate converts: 5 × 10 × 0.9');
  });

  it('does not mind an old rate on days nothing is held in the currency', () => {
    const sold = holding({
      versions: [
        { from: noon(days[0]!), holdings: { US1: 5 } },
        { from: noon(days[4]!), holdings: { $EUR: 45 } },
      ],
    });
    const answer = portfolioHistory(sold, prices, table, ages(3));
    assert.equal(answer.points.at(-1)!.value, 45);
  });

  it('refuses a flow converted on a day its rate is too old, at the flow', () =>
    refused(
      historyRequest(days, { flows: [{ at: noon(days[5]!), amount: '100', currency: 'USD' }] }),
      ages(6),
      ['flows', 0, 'currency'],
      'EUR/USD rate of 2026-01-05 is older than 6 days on 2026-01-12 (for USD/EUR)',
    ));

  it('refuses a model weight whose rate is too old on any day of the period', () =>
    refused(
      historyRequest(days, { model: { weights: { US1: 1 }, cash_weight: 0 } }),
      ages(6),
      ['model', 'weights', 'US1'],
      'EUR/USD rate of 2026-01-05 is older than 6 days on 2026-01-12 (for USD/EUR)',
    ));

  it("checks the base currency's leg too", () => {
    const gbp = fxLeg(days, 'GBP', ['2026-01-05']);
    refused(
      holding({ base_currency: 'GBP' }),
      ages(5, [
        fxLeg(
          days,
          'USD',
          Array.from(days, (d) => new Date(d * 86_400_000).toISOString().slice(0, 10)),
        ),
        gbp,
      ]),
      ['versions', 0, 'holdings', 'US1'],
      'EUR/GBP rate of 2026-01-05 is older than 5 days on 2026-01-12 (for USD/GBP)',
    );
  });
});
