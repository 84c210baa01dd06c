// Reference data answers: the requested fields of instruments or universes, as JSON or Arrow.
import { NotFound, type Loc } from '../domain/errors.ts';
import { resultToArrowStream } from '../arrow/duckdb-chunks.ts';
import { storedKeys } from '../custom/store.ts';
import type { DuckSession, DuckStore } from '../store/duckdb.ts';
import { WaitClock } from '../store/wait-clock.ts';
import { resolveFields, unknownField } from '../domain/reference-fields.ts';
import {
  customTypesSelect,
  referenceJsonSelect,
  referenceSelect,
  universeExistsSelect,
  type ExtraKind,
  type InstrumentSource,
  type ReferencePlan,
} from './sql.ts';

export type ReferenceRequest = {
  tenantId: string;
  source: InstrumentSource;
  fields: readonly string[];
  fieldsExtra: readonly string[];
  /** Where `fields` and `fields_extra` were in the request, for 422s (`['body','fields']`). */
  loc: { fields: Loc; fieldsExtra: Loc };
  format: 'json' | 'arrow';
};

/** The encoded answer: UTF-8 JSON text or an Arrow IPC stream; `queryMs`: the part of its making spent waiting for DuckDB (queries, results). */
export type ReferenceAnswer = { format: 'json' | 'arrow'; bytes: Uint8Array; queryMs: number };

const NUMBER_TYPES = new Set(['BIGINT', 'UBIGINT', 'HUGEINT', 'DOUBLE']);

/**
 * Arrow type of a custom column from the JSON types of its values (contract: ReferenceArrowStream):
 * Float64 when every non-null value is a number, Bool when every one is a boolean, Utf8 otherwise
 * (strings as they are, other values as their JSON text). A column without values is Float64.
 */
export function customColumnKind(jsonTypes: readonly string[]): ExtraKind {
  const present = jsonTypes.filter((t) => t !== 'NULL');
  if (present.every((t) => NUMBER_TYPES.has(t))) return 'number';
  if (present.every((t) => t === 'BOOLEAN')) return 'bool';
  return 'text';
}

/**
 * Reference data of instruments for a tenant (docs/adr/0013-data-fields-and-arrow.md): the requested fields, a custom value
 * of the tenant winning over the provider's when its key is the field's lower-case name, then the
 * custom keys of `fields_extra`. An unknown field or custom key is a 422 `unknown_field`, an
 * unknown universe a 404; an unknown instrument is left out.
 */
export async function referenceAnswer(duck: DuckStore, request: ReferenceRequest): Promise<ReferenceAnswer> {
  const fields = resolveFields(request.fields, request.loc.fields);
  const extras = [...new Set(request.fieldsExtra)];
  return duck.use(async (session) => {
    const { conn, ref } = session;
    const { source, tenantId } = request;
    const clock = new WaitClock();
    if (source.kind === 'universe' && source.name !== undefined) {
      const u = universeExistsSelect(ref, tenantId, source.name);
      const found = (await clock.wait(conn.runAndReadAll(u.sql, u.values, u.types))).getRows()[0]?.[0] === true;
      if (!found) throw new NotFound(`Unknown universe '${source.name}'.`);
    }
    const fieldKeys = fields.map((f) => f.key);
    const stored = new Set(fieldKeys.length + extras.length > 0 ? await clock.wait(storedKeys(conn, tenantId, [...fieldKeys, ...extras])) : []);
    const missing = extras.findIndex((k) => !stored.has(k));
    if (missing >= 0) {
      const index = request.fieldsExtra.indexOf(extras[missing]!);
      throw unknownField([...request.loc.fieldsExtra, index], extras[missing]!, await storedKeys(conn, tenantId));
    }
    const plan: ReferencePlan = {
      ref,
      tenantId,
      source,
      fields,
      overrides: new Set(fieldKeys.filter((k) => stored.has(k))),
      // A key that is also a requested field is already in that field's column.
      extras: extras.filter((k) => !fieldKeys.includes(k)).map((key) => ({ key, kind: 'json' as ExtraKind })),
    };
    return request.format === 'json' ? jsonAnswer(session, plan, clock) : arrowAnswer(session, plan, clock);
  });
}

async function jsonAnswer({ conn }: DuckSession, plan: ReferencePlan, clock: WaitClock): Promise<ReferenceAnswer> {
  const q = referenceJsonSelect(plan);
  const text = (await clock.wait(conn.runAndReadAll(q.sql, q.values, q.types))).getRows()[0]![0] as string;
  return { format: 'json', bytes: Buffer.from(text, 'utf8'), queryMs: clock.ms };
}

async function arrowAnswer({ conn }: DuckSession, plan: ReferencePlan, clock: WaitClock): Promise<ReferenceAnswer> {
  let typed = plan;
  if (plan.extras.length > 0) {
    const t = customTypesSelect(
      plan,
      plan.extras.map((e) => e.key),
    );
    const types = new Map(
      (await clock.wait(conn.runAndReadAll(t.sql, t.values, t.types))).getRowsJson().map(([key, list]) => [key as string, list as string[]]),
    );
    typed = { ...plan, extras: plan.extras.map((e) => ({ key: e.key, kind: customColumnKind(types.get(e.key) ?? []) })) };
  }
  const q = referenceSelect(typed);
  const result = await clock.wait(conn.stream(q.sql, q.values, q.types));
  // instrument_id, then the fields (categories dictionary-encoded), then the extra keys.
  const bytes = await resultToArrowStream(
    result,
    q.columns.map((name, i) => ({ name, nullable: i > 0, dictionary: typed.fields[i - 1]?.category === true })),
    clock,
  );
  return { format: 'arrow', bytes, queryMs: clock.ms };
}
