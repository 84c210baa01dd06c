import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';
import { newId } from '@platform/shared';
import {
  assessmentStatusUpdate,
  cashNotification,
  optimizationOwnerChoiceUpdate,
  optimizationStatusUpdate,
  portfolioEvents,
  profileEvents,
  userErasure,
  type OutboundEvent,
} from '../../src/domain/events.ts';
import { PERSONAL_FIELDS } from '../../src/domain/erasure.ts';
import type { Doc } from '../../src/domain/merge.ts';

/** Every built event must validate against the AsyncAPI contract's TenantEvent (one of the catalogue). */
const asyncapi = parse(readFileSync(new URL('../../../contracts/events.asyncapi.yaml', import.meta.url), 'utf8'));
const ajv = new Ajv({ strict: false, allErrors: true });
addFormats.default(ajv);
for (const [name, schema] of Object.entries(asyncapi.components.schemas)) ajv.addSchema(schema as object, `#/components/schemas/${name}`);
const validate = ajv.compile({ $ref: '#/components/schemas/TenantEvent' });
const conforms = (e: OutboundEvent) => assert.ok(validate(e.envelope), `${e.envelope.subject}.${e.envelope.action}: ${JSON.stringify(validate.errors)}`);

const now = '2026-03-01T10:00:00.000Z';
const owner = { id: newId('U'), external_id: 'crm-1' };
const portfolio = (over: Doc = {}, settings: Doc = {}): { id: string; doc: Doc } => ({
  id: newId('P'),
  doc: {
    external_id: null,
    base_currency: 'EUR',
    money_type: 'REAL_MONEY',
    status: 'WAITING_FOR_FUNDS',
    portfolio: { $EUR: 100 },
    config: { manager: 'ROBO_ADVISOR_DISCRETIONARY', manager_settings: settings },
    ...over,
  },
});
const names = (events: OutboundEvent[]) => events.map((e) => `${e.envelope.subject}.${e.envelope.action}`);

describe('event builders', () => {
  it('build portfolio events exactly when the catalogue says', () => {
    const p = portfolio();
    assert.deepEqual(names(portfolioEvents(undefined, p, owner, 'CLIENT', now)), ['portfolios.creation']);
    assert.deepEqual(names(portfolioEvents(p, { ...p, doc: { ...p.doc, status: 'ACTIVE' } }, owner, 'CLIENT', now)), ['portfolios.status-update']);
    assert.deepEqual(names(portfolioEvents(p, { ...p, doc: { ...p.doc, name: 'x' } }, owner, 'CLIENT', now)), []);
    const divest = portfolio({}, { divest_amount: 50 });
    assert.deepEqual(names(portfolioEvents(p, { ...divest, id: p.id }, owner, 'CLIENT', now)), [
      'portfolios.divest-amount-update',
      'portfolios.cash-available-for-withdrawal',
    ]);
    assert.deepEqual(
      names(portfolioEvents(p, { ...divest, id: p.id }, owner, 'SERVICE', now)),
      ['portfolios.divest-amount-update'],
      'cash-available only without broker integration',
    );
    const big = portfolio({}, { divest_amount: 1e100 });
    assert.deepEqual(
      names(portfolioEvents(p, { ...big, id: p.id }, owner, 'CLIENT', now)),
      ['portfolios.divest-amount-update'],
      'cash does not cover everything',
    );
    const userManaged = portfolio({ config: { manager: 'USER_MANAGED', manager_settings: {} } });
    assert.deepEqual(names(portfolioEvents(userManaged, { ...userManaged, doc: { ...userManaged.doc, portfolio: { $EUR: 5 } } }, owner, 'CLIENT', now)), []);
  });

  it('build events that conform to the AsyncAPI contract, each of the catalogue', () => {
    const p = portfolio({ external_id: 'pf-1' }, { divest_amount: 50 });
    const all = [
      ...portfolioEvents(undefined, p, owner, 'CLIENT', now),
      ...portfolioEvents(portfolio(), { ...p, doc: { ...p.doc, status: 'ACTIVE' } }, owner, 'CLIENT', now),
      ...profileEvents(undefined, { id: newId('N'), doc: {} }, p, owner, now),
      ...profileEvents({ doc: {} }, { id: newId('N'), doc: {} }, p, owner, now),
      optimizationStatusUpdate({ id: newId('O'), portfolio_id: p.id, external_id: null, is_recommended: true, status: 'SUCCESS' }, now),
      optimizationOwnerChoiceUpdate({ id: newId('O'), portfolio_id: p.id, external_id: 'opt-1', owner_choice: 'ACCEPT' }, now),
      assessmentStatusUpdate({ profile_id: newId('N'), questionnaire_id: newId('Q'), status: 'ACCEPTED', accepted_datetime: now }, now),
      assessmentStatusUpdate({ profile_id: newId('N'), questionnaire_id: newId('Q'), status: 'IN_PROGRESS' }, now),
      cashNotification('deposit-received', { portfolio: p, owner, amount: '100.50', currency: 'EUR', transaction_id: newId('T') }, now),
      cashNotification('withdrawal-executed', { portfolio: p, owner, amount: '20', currency: 'EUR', transaction_id: null }, now),
      userErasure({ id: owner.id, doc: { external_id: 'crm-1', first_name: null } }, now),
    ];
    assert.deepEqual(
      new Set(names(all)),
      new Set([
        'portfolios.creation',
        'portfolios.status-update',
        'portfolios.divest-amount-update',
        'portfolios.cash-available-for-withdrawal',
        'portfolios.profile-created-for-portfolio',
        'portfolios.profile-updated-for-portfolio',
        'optimizations.status-update',
        'optimizations.owner-choice-update',
        'assessments.assessment-status-update',
        'notifications.deposit-received',
        'notifications.withdrawal-executed',
        'users.erasure',
      ]),
    );
    all.forEach(conforms);
    assert.equal('accepted_datetime' in all[all.length - 4]!.envelope.data, false, 'accepted_datetime only when ACCEPTED');
  });

  it('carry no personal field: no schema of the events contract has one (docs/adr/0059-personal-data-erasure.md)', () => {
    const found: string[] = [];
    const walk = (node: unknown, path: string) => {
      if (!node || typeof node !== 'object') return;
      for (const [key, value] of Object.entries(node)) {
        if (key === 'properties' && value && typeof value === 'object')
          for (const field of Object.keys(value)) if ((PERSONAL_FIELDS as readonly string[]).includes(field)) found.push(`${path}.${field}`);
        walk(value, `${path}.${key}`);
      }
    };
    walk(asyncapi.components.schemas, 'schemas');
    assert.deepEqual(found, []);
    walk({ properties: { email: {} } }, 'probe');
    assert.deepEqual(found, ['probe.email'], 'the walk finds a personal field where there is one');
  });

  it('refuses to validate an event the contract does not know (the check can fail)', () => {
    const bad = cashNotification('deposit-received', { portfolio: portfolio(), owner, amount: '1', currency: 'EUR', transaction_id: null }, now);
    assert.equal(validate({ ...bad.envelope, action: 'deposit-sent' }), false);
  });
});
