import { fromNumber, newUlid } from '@platform/shared';
import type { Doc } from './merge.ts';

/** The envelope of every outbound event (docs/adr/0012-outbound-events.md). */
export type EventEnvelope = { id: string; created: string; version: '1.0.0'; subject: string; action: string; data: Doc };

/** An event to write to the outbox, with the entity whose order it keeps. */
export type OutboundEvent = { entityId: string; envelope: EventEnvelope };

export function envelope(subject: string, action: string, data: Doc, now: string, entityId: string): OutboundEvent {
  return { entityId, envelope: { id: newUlid(), created: now, version: '1.0.0', subject, action, data } };
}

export type Owner = { id: string; external_id: string | null };

const portfolioRef = (p: { id: string; doc: Doc }, owner: Owner) => ({
  id: p.id,
  external_id: (p.doc.external_id as string | null) ?? null,
  owned_by_user_id: owner.id,
  owned_by_external_user_id: owner.external_id,
});

const settings = (doc: Doc) => ((doc.config as Doc | undefined)?.manager_settings ?? {}) as Doc;
const isRobo = (doc: Doc) => String((doc.config as Doc | undefined)?.manager ?? '').startsWith('ROBO_ADVISOR');

/** Whether the cash of the base currency covers `amount`, compared as exact decimals. */
const cashCovers = (doc: Doc, amount: number) =>
  fromNumber(Number((doc.portfolio as Doc | undefined)?.[`$${String(doc.base_currency)}`] ?? 0)).gte(fromNumber(amount));

/**
 * The events a portfolio change causes, per the interface's catalogue: creation; every change of
 * the derived status; every update of divest_amount (the total, not an increment); and, with the
 * broker integrated by the client, cash-available-for-withdrawal when a withdrawal is requested or
 * the holdings of a real-money portfolio change and the cash covers the requested amount.
 */
export function portfolioEvents(
  before: { doc: Doc } | undefined,
  after: { id: string; doc: Doc },
  owner: Owner,
  brokerIntegration: 'CLIENT' | 'SERVICE',
  now: string,
): OutboundEvent[] {
  const ref = portfolioRef(after, owner);
  const events: OutboundEvent[] = [];
  if (!before) events.push(envelope('portfolios', 'creation', ref, now, after.id));
  if (before && before.doc.status !== after.doc.status)
    events.push(envelope('portfolios', 'status-update', { ...ref, value: after.doc.status as string }, now, after.id));
  const divest = settings(after.doc).divest_amount;
  const divestBefore = before ? settings(before.doc).divest_amount : undefined;
  const divestChanged = divest !== undefined && divest !== divestBefore;
  if (isRobo(after.doc) && divestChanged) {
    events.push(
      envelope(
        'portfolios',
        'divest-amount-update',
        { ...ref, divest_amount: (divest ?? null) as number | null, currency: after.doc.base_currency as string },
        now,
        after.id,
      ),
    );
  }
  const holdingsChanged = before !== undefined && JSON.stringify(before.doc.portfolio) !== JSON.stringify(after.doc.portfolio);
  const pending = typeof divest === 'number' && divest > 0;
  if (
    brokerIntegration === 'CLIENT' &&
    isRobo(after.doc) &&
    pending &&
    (divestChanged || (holdingsChanged && after.doc.money_type === 'REAL_MONEY')) &&
    cashCovers(after.doc, divest as number)
  ) {
    events.push(envelope('portfolios', 'cash-available-for-withdrawal', { ...ref, currency: after.doc.base_currency as string }, now, after.id));
  }
  return events;
}

/** portfolios.profile-created-for-portfolio / -updated- when a suitability profile names a portfolio. */
export function profileEvents(
  before: { doc: Doc } | undefined,
  after: { id: string; doc: Doc },
  portfolio: { id: string; doc: Doc } | undefined,
  owner: Owner | undefined,
  now: string,
): OutboundEvent[] {
  if (!portfolio || !owner) return [];
  const data = { ...portfolioRef(portfolio, owner), suitability_profile_id: after.id };
  return [envelope('portfolios', before ? 'profile-updated-for-portfolio' : 'profile-created-for-portfolio', data, now, portfolio.id)];
}

type OptimizationRef = { id: string; portfolio_id: string; external_id: string | null };

/** optimizations.status-update: an optimization is ready (in 1.0.0 only with value SUCCESS). */
export const optimizationStatusUpdate = (o: OptimizationRef & { is_recommended: boolean; status: string }, now: string): OutboundEvent =>
  envelope(
    'optimizations',
    'status-update',
    { id: o.id, portfolio_id: o.portfolio_id, external_id: o.external_id, is_recommended: o.is_recommended, value: o.status },
    now,
    o.portfolio_id,
  );

/** optimizations.owner-choice-update: the owner's choice of an advisory optimization changed. */
export const optimizationOwnerChoiceUpdate = (o: OptimizationRef & { owner_choice: string }, now: string): OutboundEvent =>
  envelope(
    'optimizations',
    'owner-choice-update',
    { id: o.id, portfolio_id: o.portfolio_id, external_id: o.external_id, value: o.owner_choice },
    now,
    o.portfolio_id,
  );

/** profiles.assessment-status-update (payload subject `assessments`); accepted_datetime only when ACCEPTED. */
export function assessmentStatusUpdate(
  a: { profile_id: string; questionnaire_id: string; status: string; accepted_datetime?: string | null },
  now: string,
): OutboundEvent {
  const data: Doc = { profile_id: a.profile_id, questionnaire_id: a.questionnaire_id, value: a.status };
  if (a.status === 'ACCEPTED' && a.accepted_datetime) data.accepted_datetime = a.accepted_datetime;
  return envelope('assessments', 'assessment-status-update', data, now, a.profile_id);
}

/** users.erasure (docs/adr/0059-personal-data-erasure.md): the user's ids only, so that the Client Middleware erases on its side. */
export function userErasure(user: { id: string; doc: Doc }, erasedAt: string): OutboundEvent {
  return envelope('users', 'erasure', { id: user.id, external_id: (user.doc.external_id as string | null) ?? null, erased_at: erasedAt }, erasedAt, user.id);
}

type Movement = { portfolio: { id: string; doc: Doc }; owner: Owner; amount: string; currency: string; transaction_id: string | null };

/** notifications.deposit-received and notifications.withdrawal-executed (docs/adr/0012-outbound-events.md). */
export function cashNotification(kind: 'deposit-received' | 'withdrawal-executed', m: Movement, now: string): OutboundEvent {
  return envelope(
    'notifications',
    kind,
    { ...portfolioRef(m.portfolio, m.owner), amount: m.amount, currency: m.currency, transaction_id: m.transaction_id },
    now,
    m.portfolio.id,
  );
}
