import type { Knex } from 'knex';
import type { Logger } from '@platform/shared';
import { nightlyDayDue } from '../domain/optimization-gate.ts';
import { recordRetentionRun, retentionRunDone, tryRetentionLock } from '../store/retention.ts';
import { RETENTION_RULES, type RetentionRule, type RetentionSettings } from './retention-rules.ts';
import { startTimedLoop } from './timed-loop.ts';

/** Counts what each rule removed, on the replica that removed it. */
export type RetentionMetrics = { deleted: (rule: string, rows: number) => void };

export type RetentionOptions = {
  db: Knex;
  logger: Logger;
  settings: RetentionSettings;
  /** Rows per statement (RETENTION_BATCH_ROWS). */
  batch: number;
  metrics?: RetentionMetrics;
  now?: () => Date;
  rules?: readonly RetentionRule[];
};

export type RetentionRun = { day: string; deleted: Record<string, number>; ms: number };

/**
 * Applies every active rule (docs/adr/0061-retention.md), each in batches of `batch` rows until a
 * batch comes back short, under the advisory lock that lets one replica run at a time; undefined
 * when another holds it, or when `skipDay` names a day already done. Every batch commits on its own
 * (short row locks); the day's row is written last, in the transaction that holds the lock, so a run
 * cut off half-way leaves only whole batches removed and no row, and the next attempt runs again.
 */
export async function runRetention(options: RetentionOptions & { skipDay?: string }): Promise<RetentionRun | undefined> {
  const { db, logger, batch } = options;
  const now = (options.now ?? (() => new Date()))();
  const day = now.toISOString().slice(0, 10);
  return db.transaction(async (lock) => {
    if (!(await tryRetentionLock(lock))) return undefined;
    if (options.skipDay !== undefined && (await retentionRunDone(lock, options.skipDay))) return undefined;
    const started = Date.now();
    const deleted: Record<string, number> = {};
    for (const rule of options.rules ?? RETENTION_RULES) {
      if (!rule.active) continue;
      const cutoff = rule.cutoff(now, options.settings);
      let total = 0;
      for (;;) {
        const removed = await rule.remove(db, cutoff, batch);
        total += removed;
        if (removed > 0) options.metrics?.deleted(rule.name, removed);
        if (removed < batch) break;
      }
      deleted[rule.name] = total;
    }
    await recordRetentionRun(lock, { day, started_at: now.toISOString(), finished_at: new Date().toISOString(), deleted });
    const run = { day, deleted, ms: Date.now() - started };
    logger.info('retention run', run);
    return run;
  });
}

/** Runs the day's retention once its time `at` (HH:MM UTC) has come and no replica ran it yet; checks every `everyMs`. */
export function startRetention(options: RetentionOptions & { at: string; everyMs?: number }): { stop: () => Promise<void> } {
  return startTimedLoop({
    name: 'retention',
    everyMs: options.everyMs ?? 60_000,
    logger: options.logger,
    step: async () => {
      const day = nightlyDayDue(options.at, (options.now ?? (() => new Date()))());
      if (day !== undefined) await runRetention({ ...options, skipDay: day });
      return false;
    },
  });
}
