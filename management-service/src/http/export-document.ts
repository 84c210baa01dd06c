import type { Knex } from 'knex';
import type { Doc } from '../domain/merge.ts';
import { EXPORT_FORMAT_VERSION, EXPORT_SECTIONS, PORTFOLIO_CHILDREN } from '../domain/personal-data.ts';
import type { EntityRow } from '../store/entities.ts';
import {
  brokerInstructionsOf,
  childrenPage,
  eventsAboutPage,
  optimizationRequestsOf,
  ownedPortfolios,
  profilesOfUser,
  versionsOf,
  withdrawalsOf,
  type EventsPosition,
} from '../store/personal-data.ts';
import { presentEntity } from './present.ts';

/** Rows read per statement: a page's JSON is a few hundred kilobytes at most, however large the export. */
export const EXPORT_PAGE = 500;

type Snapshot = { trx: Knex.Transaction; tenantId: string; user: EntityRow; at: Date };

const json = (value: unknown) => JSON.stringify(value);

/** `{ "<name>": entity, "versions": [each version as the entity then] }` for each row, with `extra` fields after. */
async function withVersions(s: Snapshot, rows: EntityRow[], name: string): Promise<Map<string, string>> {
  const versions = await versionsOf(
    s.trx,
    s.tenantId,
    rows.map((r) => r.id),
  );
  const byId = new Map<string, Doc[]>();
  const rowById = new Map(rows.map((r) => [r.id, r]));
  for (const v of versions) {
    const list = byId.get(v.id) ?? [];
    list.push(presentEntity(rowById.get(v.id)!, v));
    byId.set(v.id, list);
  }
  return new Map(rows.map((r) => [r.id, `"${name}":${json(presentEntity(r))},"versions":${json(byId.get(r.id) ?? [])}`]));
}

/** A JSON array of a parent's children, written a page at a time. */
async function* children(s: Snapshot, parentId: string, type: string, name: string): AsyncGenerator<string> {
  yield '[';
  let after = '';
  let first = true;
  for (;;) {
    const rows = await childrenPage(s.trx, s.tenantId, parentId, type, after, EXPORT_PAGE);
    if (rows.length === 0) break;
    const parts = await withVersions(s, rows, name);
    const requests =
      type === 'optimizations'
        ? await optimizationRequestsOf(
            s.trx,
            s.tenantId,
            rows.map((r) => r.id),
          )
        : undefined;
    const items = rows.map((r) => {
      const extra = requests ? `,"requests":${json(requests.filter((q) => q.optimization_id === r.id))}` : '';
      return `{${parts.get(r.id)!}${extra}}`;
    });
    yield (first ? '' : ',') + items.join(',');
    first = false;
    after = rows[rows.length - 1]!.id;
    if (rows.length < EXPORT_PAGE) break;
  }
  yield ']';
}

async function* portfolio(s: Snapshot, row: EntityRow, head: string): AsyncGenerator<string> {
  yield `{${head}`;
  for (const { type, name } of PORTFOLIO_CHILDREN) {
    yield `,"${type}":`;
    yield* children(s, row.id, type, name);
  }
  yield `,"withdrawals":${json(await withdrawalsOf(s.trx, s.tenantId, row.id))}`;
  yield `,"broker_instructions":${json(await brokerInstructionsOf(s.trx, s.tenantId, row.id))}}`;
}

async function* events(s: Snapshot, entityIds: string[], parentIds: string[]): AsyncGenerator<string> {
  yield '[';
  let after: EventsPosition | undefined;
  let first = true;
  for (;;) {
    const rows = await eventsAboutPage(s.trx, s.tenantId, { entityIds, parentIds }, after, EXPORT_PAGE);
    if (rows.length === 0) break;
    yield (first ? '' : ',') + rows.map((r) => json(r.envelope)).join(',');
    first = false;
    const last = rows[rows.length - 1]!;
    after = { xid: last.xid, seq: last.seq };
    if (rows.length < EXPORT_PAGE) break;
  }
  yield ']';
}

/**
 * The export document of one user as JSON text in pieces, each read from the snapshot `trx` when
 * the previous piece has been taken: the document is never whole in memory
 * (docs/adr/0060-personal-data-export.md).
 */
export async function* exportDocument(s: Snapshot): AsyncGenerator<string> {
  const header = {
    format_version: EXPORT_FORMAT_VERSION,
    exported_datetime: s.at.toISOString(),
    tenant_id: s.tenantId,
    user_id: s.user.id,
    sections: EXPORT_SECTIONS,
  };
  const user = await withVersions(s, [s.user], 'user');
  yield `{"export":${json(header)},${user.get(s.user.id)!.replace('"versions":', '"user_versions":')}`;

  const profiles = await profilesOfUser(s.trx, s.tenantId, s.user.id);
  const profileParts = await withVersions(s, profiles, 'profile');
  yield `,"suitability_profiles":[${profiles.map((p) => `{${profileParts.get(p.id)!}}`).join(',')}]`;

  const portfolios = await ownedPortfolios(s.trx, s.tenantId, s.user.id);
  const portfolioParts = await withVersions(s, portfolios, 'portfolio');
  yield ',"portfolios":[';
  for (const [i, row] of portfolios.entries()) {
    if (i > 0) yield ',';
    yield* portfolio(s, row, portfolioParts.get(row.id)!);
  }
  yield '],"events":';
  const portfolioIds = portfolios.map((p) => p.id);
  yield* events(s, [s.user.id, ...profiles.map((p) => p.id), ...portfolioIds], portfolioIds);
  yield '}';
}
