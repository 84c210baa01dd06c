import assert from 'node:assert/strict';
import { StateConflict } from '../../src/domain/errors.ts';
import type { Doc } from '../../src/domain/merge.ts';
import {
  awaitsOwnerChoice,
  checkOwnerChoice,
  closedByPortfolio,
  ended,
  nightlyDayDue,
  optimizationGate,
  unansweredDetail,
  withResult,
  type GateInput,
} from '../../src/domain/optimization-gate.ts';
import { inputsDigest, optimizerInputs, pendingOptimization } from '../../src/domain/optimization-request.ts';

const NOW = '2026-03-04T05:06:07.000Z';

/** A robo-advised portfolio document; `settings` merge into its manager settings. */
const portfolio = (over: Doc = {}, settings: Doc = {}, manager = 'ROBO_ADVISOR_DISCRETIONARY'): Doc => ({
  base_currency: 'EUR',
  money_type: 'REAL_MONEY',
  archived: false,
  portfolio: { $EUR: 100 },
  config: { manager, manager_version: 1, manager_settings: { active: true, policy_id: 'Y1', ...settings } },
  ...over,
});

const optimization = (id: string, over: Doc = {}) => ({ id, doc: { ...pendingOptimization('P1'), ...over } });
const success = (id: string, over: Doc = {}) => optimization(id, { status: 'SUCCESS', is_recommended: true, ...over });

const gate = (over: Partial<GateInput> = {}) =>
  optimizationGate({ portfolio: { doc: portfolio(), deleted: false }, policy: { deleted: false }, optimizations: [], now: NOW, ...over });

const refusal = (over: Partial<GateInput>) => {
  const decision = gate(over);
  assert.equal(decision.open, false, 'the gate should be closed');
  return decision.open ? undefined : { refusal: decision.refusal, detail: decision.detail };
};

describe('optimization gate (docs/adr/0021-optimizations.md)', () => {
  it('opens for a robo-advised, active portfolio with a policy and nothing open, of either mandate', () => {
    assert.deepEqual(gate(), { open: true, supersede: [] });
    assert.deepEqual(gate({ portfolio: { doc: portfolio({}, {}, 'ROBO_ADVISOR_ADVISORY'), deleted: false } }), { open: true, supersede: [] });
  });

  it('refuses each reason with a detail that names it', () => {
    const cases: [Partial<GateInput>, string, RegExp][] = [
      [{ portfolio: { doc: portfolio(), deleted: true } }, 'DELETED', /deleted/],
      [{ portfolio: { doc: portfolio({}, {}, 'USER_MANAGED'), deleted: false } }, 'NOT_ROBO', /not robo-advised .*USER_MANAGED/],
      [{ portfolio: { doc: portfolio({ archived: true }), deleted: false } }, 'ARCHIVED', /archived/],
      [{ portfolio: { doc: portfolio({}, { active: false }), deleted: false } }, 'INACTIVE', /inactive .*active is false/],
      [{ portfolio: { doc: portfolio({}, { policy_id: null }), deleted: false }, policy: undefined }, 'NO_POLICY', /no policy/],
      [{ policy: undefined }, 'NO_POLICY', /policy Y1 is deleted/],
      [{ policy: { deleted: true } }, 'NO_POLICY', /policy Y1 is deleted/],
      [
        { portfolio: { doc: portfolio({}, { optimization_cooldown_end: '2026-03-04T05:06:08.000Z' }), deleted: false } },
        'COOLDOWN',
        /cool-down: no optimization before 2026-03-04T05:06:08/,
      ],
      [{ optimizations: [optimization('O1')] }, 'PENDING', /O1 .*still being computed/],
      [{ optimizations: [success('O2', { execution_status: 'PENDING' })] }, 'AWAITING_EXECUTION', /O2 .*waiting for execution/],
    ];
    for (const [input, reason, detail] of cases) {
      const got = refusal(input);
      assert.equal(got?.refusal, reason, JSON.stringify(input));
      assert.match(got!.detail, detail);
    }
  });

  it('tells a trigger when the portfolio alone closes the gate, and then the gate is closed whatever its policy and optimizations', () => {
    const alone: { doc: Doc; deleted: boolean }[] = [
      { doc: portfolio(), deleted: true },
      { doc: portfolio({}, {}, 'USER_MANAGED'), deleted: false },
      { doc: portfolio({ archived: true }), deleted: false },
      { doc: portfolio({}, { active: false }), deleted: false },
      { doc: portfolio({}, { policy_id: null }), deleted: false },
    ];
    for (const p of alone) {
      assert.equal(closedByPortfolio(p), true, JSON.stringify(p));
      for (const policy of [undefined, { deleted: false }, { deleted: true }]) assert.equal(gate({ portfolio: p, policy }).open, false);
    }
    // A robo-advised, active portfolio naming a policy: the policy and the open optimizations decide, so they are read.
    assert.equal(closedByPortfolio({ doc: portfolio(), deleted: false }), false);
    assert.equal(closedByPortfolio({ doc: portfolio({}, { optimization_cooldown_end: '2099-01-01T00:00:00.000Z' }), deleted: false }), false);
  });

  describe('a portfolio linked to a suitability profile (docs/adr/0027-assessments.md)', () => {
    const linked = (settings: Doc = {}) => ({ doc: portfolio({}, { suitability_profile_id: 'N1', ...settings }), deleted: false });
    const assessment = (status: string, expires: string | null = null) => ({
      questionnaire_id: 'Q1',
      status,
      answers: {},
      score: 40,
      attempts: 1,
      started_datetime: '2025-01-01T00:00:00.000Z',
      completed_datetime: null,
      accepted_datetime: status === 'ACCEPTED' || status === 'EXPIRED' ? '2025-01-01T00:00:00.000Z' : null,
      expires_datetime: expires,
      cooldown_end_datetime: null,
    });
    const profile = (...assessments: Doc[]) => ({ deleted: false, doc: { assessments } });

    it('is optimized while the profile holds an ACCEPTED assessment that has not expired', () => {
      assert.equal(gate({ portfolio: linked(), suitability: profile(assessment('ACCEPTED', '2026-03-04T05:06:07.001Z')) }).open, true);
      assert.equal(gate({ suitability: undefined }).open, true, 'a portfolio linking no profile follows its policy alone');
    });

    it('is refused once it expired (even before the job marked it), while re-assessed, or when the profile is deleted', () => {
      const cases: [GateInput['suitability'], RegExp][] = [
        [profile(assessment('ACCEPTED', NOW)), /N1 has no ACCEPTED assessment \(EXPIRED\)/],
        [profile(assessment('EXPIRED', '2026-01-01T00:00:00.000Z')), /no ACCEPTED assessment \(EXPIRED\)/],
        [profile(assessment('IN_PROGRESS')), /no ACCEPTED assessment \(IN_PROGRESS\)/],
        [profile(), /no ACCEPTED assessment \(none\)/],
        [{ deleted: true, doc: {} }, /N1 is deleted/],
        [undefined, /N1 is deleted/],
      ];
      for (const [suitability, detail] of cases) {
        const got = refusal({ portfolio: linked(), suitability });
        assert.equal(got?.refusal, 'SUITABILITY');
        assert.match(got!.detail, detail);
      }
    });

    it('never holds back money the customer asked to withdraw (divest_amount above 0)', () => {
      const expired = profile(assessment('EXPIRED', '2026-01-01T00:00:00.000Z'));
      assert.equal(gate({ portfolio: linked({ divest_amount: 500 }), suitability: expired }).open, true);
      assert.equal(gate({ portfolio: linked({ divest_amount: 0 }), suitability: expired }).open, false);
    });
  });

  it('checks in a fixed order: a deleted, archived portfolio is refused as deleted; pending before waiting for execution', () => {
    assert.equal(refusal({ portfolio: { doc: portfolio({ archived: true }, { active: false }), deleted: true } })?.refusal, 'DELETED');
    assert.equal(refusal({ optimizations: [success('O2', { execution_status: 'PENDING' }), optimization('O3')] })?.refusal, 'PENDING');
  });

  it('lets a cool-down that has ended pass, and reads it as an instant', () => {
    for (const end of ['2026-03-04T05:06:07.000Z', '2026-03-04T05:06:06.999Z', '2026-03-04T06:06:06+01:00']) {
      assert.equal(gate({ portfolio: { doc: portfolio({}, { optimization_cooldown_end: end }), deleted: false } }).open, true, end);
    }
    assert.equal(gate({ portfolio: { doc: portfolio({}, { optimization_cooldown_end: '2026-03-04T06:06:08+01:00' }), deleted: false } }).open, false);
  });

  it('supersedes an advisory SUCCESS awaiting the choice, not a chosen, an unrecommended or a discretionary one', () => {
    const advisory = { doc: portfolio({}, {}, 'ROBO_ADVISOR_ADVISORY'), deleted: false };
    const awaiting = success('O1');
    const open = [awaiting, success('O2', { owner_choice: 'REJECT' }), success('O3', { is_recommended: false }), success('O4', { owner_choice: 'REOPTIMIZE' })];
    assert.deepEqual(gate({ portfolio: advisory, optimizations: open }), { open: true, supersede: [awaiting] });
    assert.deepEqual(gate({ optimizations: [awaiting] }), { open: true, supersede: [] });
    assert.equal(awaitsOwnerChoice(advisory.doc, success('O5', { status: 'FAILURE' }).doc), false);
  });
});

describe('owner choice rules', () => {
  const advisory = { doc: portfolio({}, {}, 'ROBO_ADVISOR_ADVISORY'), deleted: false };

  it('accepts a choice on a recommended SUCCESS of an advisory portfolio', () => {
    assert.doesNotThrow(() => checkOwnerChoice(advisory, success('O1').doc));
  });

  it('refuses with 409 saying why: discretionary, deleted, not SUCCESS, superseded, already chosen, not recommended', () => {
    const cases: [{ doc: Doc; deleted: boolean }, Doc, RegExp][] = [
      [{ doc: portfolio(), deleted: false }, success('O1').doc, /ROBO_ADVISOR_DISCRETIONARY: the owner chooses only on advisory/],
      [{ ...advisory, deleted: true }, success('O1').doc, /deleted/],
      [advisory, optimization('O1').doc, /is PENDING: the owner chooses only on a SUCCESS/],
      [advisory, success('O1', { status: 'INFEASIBLE' }).doc, /is INFEASIBLE/],
      [advisory, success('O1', { owner_choice: 'IGNORED' }).doc, /superseded/],
      [advisory, success('O1', { owner_choice: 'ACCEPT' }).doc, /already chose ACCEPT/],
      [advisory, success('O1', { is_recommended: false }).doc, /not recommended/],
    ];
    for (const [p, o, message] of cases)
      assert.throws(
        () => checkOwnerChoice(p, o),
        (e: unknown) => e instanceof StateConflict && message.test(e.message),
      );
  });
});

describe('optimization results', () => {
  it('stores orders and the recommendation only with SUCCESS, the detail only otherwise', () => {
    const orders = { IE00B4L5Y983: { shares: 2, expected_share_price: 10.5, expected_transaction_cost: 0.01 } };
    const pending = pendingOptimization('P1');
    assert.deepEqual(withResult(pending, { status: 'SUCCESS', is_recommended: true, orders, detail: 'ignored' }), {
      ...pending,
      status: 'SUCCESS',
      is_recommended: true,
      orders,
      status_detail: null,
    });
    assert.deepEqual(withResult(pending, { status: 'INFEASIBLE', is_recommended: true, orders, detail: 'bands' }), {
      ...pending,
      status: 'INFEASIBLE',
      is_recommended: false,
      orders: {},
      status_detail: 'bands',
    });
    assert.equal(withResult(pending, { status: 'NOT_OPTIMIZED', is_recommended: false, orders: {} }).status_detail, null);
  });

  it('ends an unanswered optimization as FAILURE saying the optimizer did not answer', () => {
    const failed = ended(pendingOptimization('P1'), 'FAILURE', unansweredDetail(3, 60000));
    assert.equal(failed.status, 'FAILURE');
    assert.equal(failed.status_detail, 'The optimizer did not answer: 3 requests went unanswered for 60000 ms each.');
    assert.equal(unansweredDetail(1, 500), 'The optimizer did not answer: 1 request went unanswered for 500 ms each.');
  });

  it('fingerprints the inputs: holdings in any key order alike, any change of holdings, divest_amount or policy version differs', () => {
    const policy = { id: 'Y1', version: 2 };
    const base = inputsDigest(optimizerInputs(portfolio({ portfolio: { $EUR: 100, IE00B4L5Y983: 3 } })), policy);
    assert.match(base, /^[0-9a-f]{64}$/);
    assert.equal(inputsDigest(optimizerInputs(portfolio({ portfolio: { IE00B4L5Y983: 3, $EUR: 100 } })), policy), base);
    const changed = [
      inputsDigest(optimizerInputs(portfolio({ portfolio: { $EUR: 100.01, IE00B4L5Y983: 3 } })), policy),
      inputsDigest(optimizerInputs(portfolio({ portfolio: { $EUR: 100, IE00B4L5Y983: 3 } }, { divest_amount: 5 })), policy),
      inputsDigest(optimizerInputs(portfolio({ portfolio: { $EUR: 100, IE00B4L5Y983: 3 } })), { id: 'Y1', version: 3 }),
      inputsDigest(optimizerInputs(portfolio({ portfolio: { $EUR: 100, IE00B4L5Y983: 3 } })), { id: 'Y2', version: 2 }),
    ];
    assert.equal(new Set([base, ...changed]).size, 5);
    // A divest_amount of 0 or none asks for nothing either way.
    assert.equal(inputsDigest(optimizerInputs(portfolio({}, { divest_amount: 0 })), policy), inputsDigest(optimizerInputs(portfolio()), policy));
  });
});

describe('nightly batch schedule', () => {
  it('is due from its UTC time until the day ends, for that day', () => {
    assert.equal(nightlyDayDue('02:00', new Date('2026-03-04T01:59:59.999Z')), undefined);
    assert.equal(nightlyDayDue('02:00', new Date('2026-03-04T02:00:00.000Z')), '2026-03-04');
    assert.equal(nightlyDayDue('02:00', new Date('2026-03-04T23:59:59.999Z')), '2026-03-04');
    assert.equal(nightlyDayDue('00:00', new Date('2026-03-05T00:00:00.000Z')), '2026-03-05');
    assert.equal(nightlyDayDue('23:59', new Date('2026-03-05T12:00:00.000Z')), undefined);
  });
});
