import assert from 'node:assert/strict';
import { DEFAULT_SIZE } from '../src/lib/fan-chart.ts';
import { historyChart, periodQuery, type HistoryPoint } from '../src/lib/history-chart.ts';

const vertices = (d: string) =>
  d
    .split(' ')
    .filter(Boolean)
    .map((part) => part.slice(1).split(',').map(Number) as [number, number]);

/** Weekday points from `first` for `count` business days, the value and deposits from the day's index. */
function weekdays(first: string, count: number, point: (i: number) => Omit<HistoryPoint, 'date'>): HistoryPoint[] {
  const points: HistoryPoint[] = [];
  for (let day = Date.parse(`${first}T00:00:00Z`); points.length < count; day += 86_400_000) {
    const weekday = new Date(day).getUTCDay();
    if (weekday !== 0 && weekday !== 6) points.push({ date: new Date(day).toISOString().slice(0, 10), ...point(points.length) });
  }
  return points;
}

describe("console: a portfolio's value history", () => {
  it('asks each period from its first day, daily up to a year and weekly beyond, the model only under a policy', () => {
    const created = '2020-03-15T10:00:00.000Z';
    assert.equal(periodQuery('1M', '2026-03-31', created, false).toString(), 'from=2026-02-28&to=2026-03-31&frequency=D');
    assert.equal(periodQuery('6M', '2026-11-28', created, true).toString(), 'from=2026-05-28&to=2026-11-28&frequency=D&model=true');
    assert.equal(periodQuery('1Y', '2026-11-28', created, false).toString(), 'from=2025-11-28&to=2026-11-28&frequency=D');
    assert.equal(periodQuery('all', '2026-11-28', created, false).toString(), 'to=2026-11-28&frequency=W', 'the service starts at the creation day');
    assert.equal(periodQuery('all', '2026-11-28', '2026-06-01T00:00:00Z', false).get('frequency'), 'D', 'a young portfolio stays daily');
    // A period longer than the portfolio's life starts at its creation.
    assert.equal(periodQuery('1Y', '2026-11-28', '2026-10-01T08:00:00Z', false).get('from'), null);
  });

  it('draws one vertex per point of the value, the deposits and the model on the same scale', () => {
    const points = weekdays('2026-01-05', 40, (i) => ({ value: 1000 + 10 * i, net_deposits: i < 20 ? 1000 : 1200, model_value: 1000 + 12 * i }));
    const chart = historyChart(points);
    assert.equal(vertices(chart.value).length, 40);
    assert.equal(chart.vertices.length, 40);
    assert.equal(vertices(chart.deposits).length, 40);
    assert.equal(vertices(chart.model!).length, 40);
    const { left, right, width, top, height, bottom } = DEFAULT_SIZE;
    assert.equal(chart.vertices[0]!.x, left, 'the first day at the left edge');
    assert.equal(chart.vertices.at(-1)!.x, width - right, 'the last at the right edge');
    for (const [x, y] of [...vertices(chart.value), ...vertices(chart.deposits), ...vertices(chart.model!)]) {
      assert.ok(x >= left - 0.05 && x <= width - right + 0.05, `x ${x} in the plot`);
      assert.ok(y >= top - 0.05 && y <= height - bottom + 0.05, `y ${y} in the plot`);
    }
    // The same scale: a higher amount is drawn higher (smaller y) whichever line it is on.
    const value = vertices(chart.value);
    const model = vertices(chart.model!);
    assert.ok(model.at(-1)![1] < value.at(-1)![1], "the model's higher end value above the portfolio's");
    assert.equal(value[0]![1], model[0]![1], 'equal start values at one height');
    // The deposit after 20 days raises the deposits line once.
    const deposits = vertices(chart.deposits);
    assert.ok(deposits[20]![1] < deposits[19]![1]);
    assert.equal(deposits[21]![1], deposits[20]![1]);
  });

  it('has no model line without model values, and ticks on the first of months within the period', () => {
    const points = weekdays('2026-01-05', 130, (i) => ({ value: 500 + i, net_deposits: 500 }));
    const chart = historyChart(points);
    assert.equal(chart.model, undefined);
    assert.ok(chart.xTicks.length >= 4 && chart.xTicks.length <= 8, `${chart.xTicks.length} ticks`);
    for (const tick of chart.xTicks) assert.match(tick.label, /^2026-0[2-7]$/);
    const labels = chart.yTicks.map((t) => t.label);
    assert.equal(labels[0], '0', 'the axis starts at zero');
    assert.ok(
      chart.yTicks.every((t, i) => i === 0 || t.y < chart.yTicks[i - 1]!.y),
      'ticks rise',
    );
  });

  it('draws a single point in the middle instead of dividing by a zero span', () => {
    const chart = historyChart([{ date: '2026-11-27', value: 100, net_deposits: 100 }]);
    assert.equal(chart.vertices.length, 1);
    assert.ok(Number.isFinite(chart.vertices[0]!.x) && Number.isFinite(chart.vertices[0]!.y));
    assert.equal(historyChart([]).value, '');
  });
});
