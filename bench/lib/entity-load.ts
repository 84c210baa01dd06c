// What bench:entities and bench:profile both send and wait for: a machine client's headers, the
// body of a new portfolio (of a user made here), and a settled database between two measurements.
import type { Knex } from 'knex';
import type { BenchPlatform } from './harness.ts';

/** The machine client's headers, a new user of the tenant and the body of `POST /portfolios/` it owns. */
export async function portfolioRequest(platform: BenchPlatform): Promise<{ headers: Record<string, string>; owner: string; body: string }> {
  const headers = { authorization: `Bearer ${platform.token}`, 'content-type': 'application/json' };
  const owner = ((await (await fetch(`${platform.managementUrl}/users/`, { method: 'POST', headers, body: '{}' })).json()) as { id: string }).id;
  const body = JSON.stringify({
    name: 'Pension',
    owned_by_user_id: owner,
    base_currency: 'EUR',
    money_type: 'REAL_MONEY',
    config: { manager: 'USER_MANAGED', manager_version: 1, manager_settings: {} },
    portfolio: { $EUR: 1000, IE00B4L5Y983: 12 },
  });
  return { headers, owner, body };
}

/**
 * Between two measurements: the relay has sent every event of the service's writes, and the tables
 * written are vacuumed and analyzed, so that neither the relay nor autovacuum of one phase runs
 * (and is counted) in the next.
 */
export async function settle(db: Knex, tables: string[]): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const { n } = (await db('outbox').whereNull('published_at').count({ n: '*' }).first()) as { n: string };
    if (Number(n) === 0) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  await db.raw(`vacuum (analyze) ${tables.join(', ')}`);
}
