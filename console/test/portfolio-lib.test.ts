import assert from 'node:assert/strict';
import { allocation, barGeometry } from '../src/lib/allocation.ts';
import { inRange, timeRange, utcOfLocalField } from '../src/lib/event-range.ts';
import { firstDeposit, fundedSince } from '../src/lib/funded.ts';
import { orderRows } from '../src/lib/orders.ts';
import { NAMES_PER_QUERY, namesQuery, portfolioOfEvent } from '../src/lib/portfolio-names.ts';
import { issueSentence, plainIssue } from '../src/lib/problem-text.ts';
import { valueHoldings } from '../src/lib/valuation.ts';

/** What gives a regular expression away: an anchor, a character class, a count or an escape. */
const REGEX = /\^|\[[A-Za-z0-9]-|\{\d|\\/;

describe('console: contract violations in words', () => {
  it('words a pattern error of an id by its type letter, with an example and without the regular expression', () => {
    const issue = { loc: ['body', 'owned_by_user_id'], msg: 'must match pattern "^U[0-9A-HJKMNP-TV-Z]{26}$"', type: 'pattern' };
    const plain = plainIssue(issue);
    assert.equal(plain.field, 'owned_by_user_id');
    assert.equal(plain.where, 'in the body');
    assert.match(plain.problem, /^must be an id: the letter U followed by 26 characters/);
    assert.match(plain.example!, /^U[0-9A-HJKMNP-TV-Z]{26}$/);
    assert.doesNotMatch(issueSentence(issue), REGEX);
  });

  it('gives an example that the pattern itself accepts, for each form it knows', () => {
    const patterns = [
      '^[A-Z]{3}$',
      '^[A-Z]{2}[A-Z0-9]{9}[0-9]$',
      '^([A-Z]{2}[A-Z0-9]{9}[0-9]|\\$[A-Z]{3})$',
      '^-?(0|[1-9][0-9]*)(\\.[0-9]+)?$',
      '^(0|[1-9][0-9]*)(\\.[0-9]+)?$',
      '^([1-9][0-9]*(\\.[0-9]+)?|0\\.[0-9]*[1-9][0-9]*)$',
      '^[A-Z]{2}[A-Z0-9]{14,30}$',
      '^\\+[1-9][0-9]{7,15}$',
      '^[a-z]{2}-[A-Z]{2}$',
      '^[A-Z][A-Z0-9_]{0,63}$',
      '^[a-z][a-z0-9_]{0,63}$',
      '^[A-Z][0-9A-HJKMNP-TV-Z]{26}$',
      '^O[0-9A-HJKMNP-TV-Z]{26}$',
    ];
    for (const pattern of patterns) {
      const plain = plainIssue({ loc: ['body', 'f'], msg: `must match pattern "${pattern}"`, type: 'pattern' });
      assert.notEqual(plain.problem, 'is not in the expected form', pattern);
      const example = plain.example!.replace(/^"(.*)"$/, '$1');
      assert.match(example, new RegExp(pattern), `${pattern}: ${plain.example}`);
      assert.doesNotMatch(plain.problem, REGEX, pattern);
    }
  });

  it('says a pattern it does not know is not in the expected form, and never quotes it', () => {
    const sentence = issueSentence({ loc: ['query', 'tag'], msg: 'must match pattern "^x{2}[q-z]+$"', type: 'pattern' });
    assert.equal(sentence, 'tag, in the address (query): is not in the expected form.');
  });

  it('words bounds, types, formats, missing and unknown fields, and strips a quoted pattern from any other message', () => {
    assert.equal(issueSentence({ loc: ['query', 'limit'], msg: 'must be <= 1000', type: 'maximum' }), 'limit, in the address (query): must be at most 1000.');
    assert.equal(
      issueSentence({ loc: ['body', 'name'], msg: 'must NOT have more than 200 characters', type: 'maxLength' }),
      'name, in the body: must be at most 200 characters long.',
    );
    assert.equal(
      issueSentence({ loc: ['body', 'config', 'cash_buffer'], msg: 'must be number', type: 'type' }),
      'config.cash_buffer, in the body: must be a number.',
    );
    assert.equal(issueSentence({ loc: ['body', 'name'], msg: 'must be string,null', type: 'type' }), 'name, in the body: must be text or null.');
    assert.equal(
      issueSentence({ loc: ['body', 'base_currency'], msg: "must have required property 'base_currency'", type: 'required' }),
      'base_currency, in the body: is required.',
    );
    assert.equal(
      issueSentence({ loc: ['body', 'nmae'], msg: 'is not an allowed field', type: 'additionalProperties' }),
      'nmae, in the body: is not a field of this request.',
    );
    assert.equal(issueSentence({ loc: ['body'], msg: 'must be object', type: 'type' }), 'the body: must be an object.');
    assert.match(
      issueSentence({ loc: ['body', 'datetime'], msg: 'must match format "date-time"', type: 'format' }),
      /RFC 3339, e\.g\. 2026-11-27T09:30:00\.000Z\.$/,
    );
    assert.equal(
      issueSentence({ loc: ['body', 'x'], msg: 'does not look like "^a+$" at all', type: 'reference' }),
      'x, in the body: does not look like at all.',
    );
    assert.equal(
      issueSentence({ loc: ['body', 'config', 'manager'], msg: 'must be one of "USER_MANAGED", "ROBO_ADVISOR_ADVISORY"', type: 'enum' }),
      'config.manager, in the body: must be one of "USER_MANAGED", "ROBO_ADVISOR_ADVISORY".',
    );
  });
});

describe("console: a portfolio's allocation against its model portfolio", () => {
  const instruments = {
    IE00B4L5Y983: { name: 'World', price: 100, currency: 'EUR' },
    IE00B3F81R35: { name: 'Bonds', price: 50, currency: 'EUR' },
    US0378331005: { name: 'Apple', price: 200, currency: 'USD' },
  };

  it('weighs positions and cash in the base currency against the targets, the model leaving the rest in cash', () => {
    const { rows } = valueHoldings({ $EUR: 200, IE00B4L5Y983: 6, IE00B3F81R35: 4 }, instruments);
    const result = allocation(rows, 'EUR', { IE00B4L5Y983: 0.6, IE00B3F81R35: 0.3, LU0000000001: 0.05 });
    assert.equal(result.total, 1000);
    assert.deepEqual(
      result.rows.map((r) => [r.key, r.name, r.current, r.model]),
      [
        ['IE00B4L5Y983', 'World', 0.6, 0.6],
        ['IE00B3F81R35', 'Bonds', 0.2, 0.3],
        ['LU0000000001', '', 0, 0.05],
        ['$EUR', 'Cash (EUR)', 0.2, 1 - 0.95],
      ],
    );
    assert.deepEqual(result.unweighed, []);
  });

  it('names positions it cannot weigh (another currency, no price) instead of counting them', () => {
    const { rows } = valueHoldings({ $EUR: 100, US0378331005: 1, XS0000000009: 3 }, instruments);
    const result = allocation(rows, 'EUR', {});
    assert.deepEqual(result.unweighed.sort(), ['US0378331005', 'XS0000000009']);
    assert.deepEqual(
      result.rows.map((r) => [r.key, r.current, r.model]),
      [['$EUR', 1, 1]],
    );
  });

  it('draws bars in proportion on an axis that ends at the next tenth above the largest weight', () => {
    const geometry = barGeometry(
      [
        { key: 'A', name: '', current: 0.5, model: 0.25 },
        { key: 'B', name: '', current: 0, model: 0.1 },
      ],
      { width: 416, label: 200, row: 40, right: 16 },
    );
    assert.equal(geometry.bars[0]!.current, 200);
    assert.equal(geometry.bars[0]!.model, 100);
    assert.equal(geometry.bars[1]!.current, 0);
    assert.equal(geometry.bars[1]!.y, 40);
    assert.deepEqual(geometry.ticks.at(-1), { x: 400, text: '50%' });
    assert.equal(geometry.height, 104);
  });
});

describe("console: a portfolio's funded date from its data", () => {
  const deposit = (datetime: string, quantity = '1000.00', status = 'SETTLED') => ({ type: 'CASH', status, quantity, datetime });

  it('is the first settled deposit while the portfolio holds something', () => {
    const transactions = [
      deposit('2026-03-02T10:00:00.000Z'),
      deposit('2026-01-05T09:00:00.000Z', '-50.00'),
      deposit('2026-02-01T08:00:00.000Z'),
      deposit('2026-01-01T00:00:00.000Z', '5', 'PENDING'),
    ];
    assert.equal(firstDeposit(transactions), '2026-02-01T08:00:00.000Z');
    assert.deepEqual(fundedSince({ $EUR: 10 }, transactions, '2026-03-02T10:00:00.000Z'), {
      state: 'deposit',
      since: '2026-02-01T08:00:00.000Z',
      stored: '2026-03-02T10:00:00.000Z',
    });
  });

  it('is absent when the portfolio holds no cash and no position, whatever funded_since says', () => {
    assert.deepEqual(fundedSince({ $EUR: 0 }, [deposit('2026-02-01T08:00:00.000Z')], '2026-02-01T08:00:00.000Z'), {
      state: 'empty',
      stored: '2026-02-01T08:00:00.000Z',
    });
    assert.deepEqual(fundedSince({}, [], null), { state: 'empty' });
  });

  it('is unknown when the portfolio holds something without a settled deposit (holdings written directly)', () => {
    assert.deepEqual(fundedSince({ IE00B4L5Y983: 3 }, [deposit('2026-02-01T08:00:00.000Z', '0.00')], null), { state: 'unknown' });
  });
});

describe("console: an optimization's orders", () => {
  it('shows each order with the status of its booked transaction, else the execution status, sells first', () => {
    const orders = {
      IE00B4L5Y983: { shares: 8, expected_share_price: 87.52, expected_transaction_cost: 0.7 },
      IE00B3F81R35: { shares: -12, expected_share_price: 4.91, expected_transaction_cost: 0.06 },
      LU0000000001: { shares: 1, expected_share_price: 10, expected_transaction_cost: 0 },
    };
    const rows = orderRows(
      orders,
      [
        { type: 'ORDER', instrument_id: 'IE00B4L5Y983', status: 'SETTLED' },
        { type: 'CASH', instrument_id: 'LU0000000001', status: 'SETTLED' },
      ],
      'PENDING',
    );
    assert.deepEqual(
      rows.map((r) => [r.isin, r.side, r.shares, r.status]),
      [
        ['IE00B3F81R35', 'sell', -12, 'PENDING'],
        ['IE00B4L5Y983', 'buy', 8, 'SETTLED'],
        ['LU0000000001', 'buy', 1, 'PENDING'],
      ],
    );
    assert.equal(orderRows(orders, [], null)[0]!.status, 'NOT SENT');
  });
});

describe('console: the events page by time', () => {
  it('reads the form fields as UTC and keeps events from (inclusive) to (exclusive)', () => {
    assert.equal(utcOfLocalField('2026-11-27T09:30'), Date.parse('2026-11-27T09:30:00.000Z'));
    assert.equal(utcOfLocalField('27/11/2026'), undefined);
    const answer = timeRange('2026-11-27T09:30', '2026-11-27T10:00');
    assert.ok('range' in answer);
    assert.equal(inRange('2026-11-27T09:30:00.000Z', answer.range), true);
    assert.equal(inRange('2026-11-27T09:59:59.999Z', answer.range), true);
    assert.equal(inRange('2026-11-27T10:00:00.000Z', answer.range), false);
    assert.equal(inRange('2026-11-27T09:29:59.999Z', answer.range), false);
    const open = timeRange('', '');
    assert.ok('range' in open, 'no bounds is a range too');
    assert.equal(inRange('2020-01-01T00:00:00.000Z', open.range), true);
  });

  it('refuses a range that ends before it starts, or a field that is not a time, saying what to give', () => {
    assert.deepEqual(timeRange('2026-11-27T10:00', '2026-11-27T09:00'), { error: 'From must be before To.' });
    assert.match((timeRange('yesterday', '') as { error: string }).error, /^From is not a time: .*e\.g\./);
  });
});

describe('console: names beside portfolio ids in the event feed', () => {
  const P = 'P01JP9ZMQCN0XG3YNRRKJ6T0FZ3';
  it('finds the portfolio an event is about: its own id, else its portfolio_id', () => {
    assert.equal(portfolioOfEvent({ id: P }), P);
    assert.equal(portfolioOfEvent({ id: 'O01JP9ZMQCN0XG3YNRRKJ6T0FZ3', portfolio_id: P }), P);
    assert.equal(portfolioOfEvent({ profile_id: 'N01JP9ZMQCN0XG3YNRRKJ6T0FZ3' }), undefined);
  });

  it('asks for the names of distinct portfolio ids in one query, never an id that could close the quotes', () => {
    assert.equal(namesQuery([P, P, "P' or name eq 'x"]), `id in ['${P}'] select name`);
    assert.equal(namesQuery(['U01JP9ZMQCN0XG3YNRRKJ6T0FZ3']), undefined);
    const many = Array.from({ length: 150 }, (_, i) => `P01JP9ZMQCN0XG3YNRRKJ6T${String(i).padStart(3, '0')}0`);
    assert.equal(namesQuery(many)!.match(/'P/g)!.length, NAMES_PER_QUERY);
  });
});
