import assert from 'node:assert/strict';
import { availableParallelism } from 'node:os';
import { ConfigError } from '@platform/shared';
import { loadDataConfig } from '../src/config.ts';

// The data service's settings that are checked against the machine (SIMULATION_THREADS,
// OPTIMIZER_THREADS) and the simulations' fair share (SIMULATION_FAIR_SHARE_HALF_LIFE_SECONDS).

const required = { DUCKDB_PATH: '/tmp/data.duckdb', DATABASE_URL: 'postgres://h/db', NATS_URL: 'nats://h:4222' };
const cores = availableParallelism();

describe('data service configuration: SIMULATION_THREADS', () => {
  it('defaults to the cores available and accepts 1 to twice the cores', () => {
    assert.equal(loadDataConfig(required).SIMULATION_THREADS, cores);
    for (const threads of [1, cores, 2 * cores]) assert.equal(loadDataConfig({ ...required, SIMULATION_THREADS: String(threads) }).SIMULATION_THREADS, threads);
  });

  it('refuses 0, more than twice the cores and anything but a whole number, saying what to set', () => {
    for (const raw of ['0', String(2 * cores + 1), '2.5', '-1', 'two', ' 2']) {
      assert.throws(
        () => loadDataConfig({ ...required, SIMULATION_THREADS: raw }),
        (error: unknown) => {
          assert.ok(error instanceof ConfigError, String(error));
          assert.equal(error.problems.length, 1);
          assert.ok(
            error.problems[0]!.startsWith(
              `SIMULATION_THREADS: "${raw}" is not a whole number from 1 to ${2 * cores} (twice the ${cores} cores available); set the threads this replica's simulations may keep busy, or leave it unset for ${cores} (`,
            ),
            error.problems[0],
          );
          return true;
        },
        raw,
      );
    }
  });
});

describe('data service configuration: OPTIMIZER_THREADS', () => {
  it('defaults to the cores available but one, at least 1, and accepts 1 to twice the cores', () => {
    assert.equal(loadDataConfig(required).OPTIMIZER_THREADS, Math.max(1, cores - 1));
    for (const threads of [1, cores, 2 * cores]) assert.equal(loadDataConfig({ ...required, OPTIMIZER_THREADS: String(threads) }).OPTIMIZER_THREADS, threads);
  });

  it('refuses 0, more than twice the cores and anything but a whole number, saying what to set', () => {
    for (const raw of ['0', String(2 * cores + 1), '1.5', 'one']) {
      assert.throws(
        () => loadDataConfig({ ...required, OPTIMIZER_THREADS: raw }),
        (error: unknown) => {
          assert.ok(error instanceof ConfigError, String(error));
          assert.deepEqual(error.problems.length, 1);
          assert.ok(
            error.problems[0]!.startsWith(
              `OPTIMIZER_THREADS: "${raw}" is not a whole number from 1 to ${2 * cores} (twice the ${cores} cores available); set the threads this replica's optimizations may keep busy, or leave it unset for ${Math.max(1, cores - 1)} (`,
            ),
            error.problems[0],
          );
          return true;
        },
        raw,
      );
    }
  });
});

describe('data service configuration: SIMULATION_FAIR_SHARE_HALF_LIFE_SECONDS', () => {
  it('defaults to 30 s and accepts whole seconds from 1 to an hour', () => {
    assert.equal(loadDataConfig(required).SIMULATION_FAIR_SHARE_HALF_LIFE_SECONDS, 30);
    for (const seconds of [1, 300, 3600]) {
      assert.equal(loadDataConfig({ ...required, SIMULATION_FAIR_SHARE_HALF_LIFE_SECONDS: String(seconds) }).SIMULATION_FAIR_SHARE_HALF_LIFE_SECONDS, seconds);
    }
  });

  it('refuses 0, more than an hour and anything but whole seconds, naming the setting', () => {
    for (const raw of ['0', '3601', '0.5', 'thirty']) {
      assert.throws(
        () => loadDataConfig({ ...required, SIMULATION_FAIR_SHARE_HALF_LIFE_SECONDS: raw }),
        (error: unknown) => {
          assert.ok(error instanceof ConfigError, String(error));
          assert.equal(error.problems.length, 1);
          assert.ok(error.problems[0]!.startsWith('SIMULATION_FAIR_SHARE_HALF_LIFE_SECONDS: '), error.problems[0]);
          return true;
        },
        raw,
      );
    }
  });
});

describe('data service configuration: FX_MAX_AGE_DAYS', () => {
  it('defaults to 5 days and accepts 0 to 366', () => {
    assert.equal(loadDataConfig(required).FX_MAX_AGE_DAYS, 5);
    for (const days of [0, 3, 366]) assert.equal(loadDataConfig({ ...required, FX_MAX_AGE_DAYS: String(days) }).FX_MAX_AGE_DAYS, days);
  });

  it('refuses a negative, fractional, too large or non-numeric age, naming the setting', () => {
    for (const raw of ['-1', '2.5', '367', 'five']) {
      assert.throws(
        () => loadDataConfig({ ...required, FX_MAX_AGE_DAYS: raw }),
        (error: unknown) => error instanceof ConfigError && error.problems.length === 1 && error.problems[0]!.startsWith('FX_MAX_AGE_DAYS: '),
        raw,
      );
    }
  });
});
