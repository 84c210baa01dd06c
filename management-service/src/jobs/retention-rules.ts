import {
  deleteIdempotencyKeys,
  deletePublishedOutbox,
  deleteRateLimitCounters,
  deleteRefreshTokenChains,
  deleteErasedUserVersions,
  deleteTokenRevocations,
  type BatchDelete,
} from '../store/retention.ts';

/** The periods the rules apply, from the service's settings (docs/configuration.md). */
export type RetentionSettings = { outboxDays: number; erasedUserYears: number };

/**
 * One rule of the retention job (docs/adr/0061-retention.md): what it removes, from when, and the
 * setting that says so. `cutoff` is the instant before which the rule's rows are past their period.
 * An inactive rule is listed so that the run's log and metrics name it, and removes nothing.
 */
export type RetentionRule = {
  name: string;
  active: boolean;
  cutoff: (now: Date, settings: RetentionSettings) => Date;
  remove: BatchDelete;
};

const DAY_MS = 86_400_000;
const daysBefore = (now: Date, days: number) => new Date(now.getTime() - days * DAY_MS);

export const RETENTION_RULES: readonly RetentionRule[] = [
  // Each key carries its own end of replay (IDEMPOTENCY_RETENTION_DAYS after it was written).
  { name: 'idempotency_keys', active: true, cutoff: (now) => now, remove: deleteIdempotencyKeys },
  // A counter past its window counts nothing: the next request starts a new window.
  { name: 'rate_limit_counters', active: true, cutoff: (now) => now, remove: deleteRateLimitCounters },
  // A revocation is kept while an access token issued before it may be alive (its expires_at).
  { name: 'token_revocations', active: true, cutoff: (now) => now, remove: deleteTokenRevocations },
  // A chain goes when its last refresh token has expired (REFRESH_TOKEN_TTL_SECONDS after it was issued).
  { name: 'refresh_token_chains', active: true, cutoff: (now) => now, remove: deleteRefreshTokenChains },
  { name: 'outbox_published', active: true, cutoff: (now, s) => daysBefore(now, s.outboxDays), remove: deletePublishedOutbox },
  // An erased user's earlier versions, their personal fields already null, once the records that name
  // the user are past their legal period (RETENTION_ERASED_USER_YEARS after the erasure; docs/adr/0059-personal-data-erasure.md).
  {
    name: 'erased_user_versions',
    active: true,
    cutoff: (now, s) =>
      new Date(Date.UTC(now.getUTCFullYear() - s.erasedUserYears, now.getUTCMonth(), now.getUTCDate(), now.getUTCHours(), now.getUTCMinutes())),
    remove: deleteErasedUserVersions,
  },
];
