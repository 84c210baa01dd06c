import type { IdLetter } from '@platform/shared';
import type { Principal } from '../principal.ts';
import type { Doc, Json } from '../merge.ts';
import type { EntityEffects } from './effects.ts';

/** An entity another one points to, to be checked against the store. */
export type Reference = { loc: (string | number)[]; id: string; type: string };

/** What a rule may need to know beyond the document itself. */
export type WriteContext = {
  principal: Principal;
  now: string;
  tenant: { broker_integration: 'CLIENT' | 'SERVICE' };
  /** The parent entity of a nested one (the portfolio of a transaction). */
  parent?: { id: string; doc: Doc; readable_by: string[]; modifiable_by: string[] };
};

/** What the generic handlers serve for every kind; the kind names each by its operationId. */
export type Operation = 'create' | 'get' | 'update' | 'delete' | 'versions' | 'list';

/**
 * The rules of one entity type, all pure: the generic handlers and the store do the I/O.
 * Documents hold the entity's own fields (no metadata); `external_id` is one of them.
 */
export type EntityKind = {
  /** The collection, as stored in entities.type. */
  type: string;
  letter: IdLetter;
  label: string;
  /** Collection path; `{parent}` stands for the parent's id of a nested type. */
  path: string;
  /** Path parameter of the entity id, and of its parent's id when nested. */
  idParam: string;
  parent?: { type: string; letter: IdLetter; label: string; idParam: string };
  operations: Record<Operation, string>;
  /** Name of its read model in the contract (components.schemas), which types query paths. */
  schema: string;
  /** Reference fields that `embed` may name (dotted paths). */
  embeddable: string[];
  /**
   * Checks of a request body that must answer before the contract's validation would (its
   * messages would mislead), by the kind's own operations; each throws a DomainError.
   */
  beforeValidation?: Partial<Record<Operation, (body: unknown) => void>>;
  /**
   * Checks of a create request as a whole (body and query) before anything is written, for what
   * the query asks beyond the document; throws a DomainError to refuse it.
   */
  beforeCreate?: (body: Doc, query: Record<string, unknown>) => void;
  /**
   * Rules of a client's requests that the service's own flows, which write through `create` and `update` too, are not
   * held to; each throws a DomainError. `update` sees the document before and after the kind's rules.
   */
  clientWrites?: { create?: (body: Doc) => void; update?: (before: Doc, after: Doc) => void; delete?: (current: Doc) => void };
  /** Turns a create body into the stored document, or throws a DomainError. */
  create: (body: Doc, ctx: WriteContext) => Doc;
  /** Applies a PATCH body to the current document, or throws a DomainError. */
  update: (current: Doc, body: Doc, ctx: WriteContext) => Doc;
  /**
   * The stored document as answers show it: fills fields that rows written before their default
   * existed lack (absent: the document as stored).
   */
  read?: (doc: Doc) => Doc;
  /** Entities the document points to; each must exist in the tenant. */
  references: (doc: Doc) => Reference[];
  /** Who besides the tenant's machine clients may read and modify it. */
  access: (doc: Doc, id: string, ctx: WriteContext) => { readable_by: string[]; modifiable_by: string[] };
  /** What a write of it causes besides the entity itself (events, requests, revocations); absent: nothing. */
  effects?: EntityEffects;
};

export const str = (value: Json | undefined): string | undefined => (typeof value === 'string' ? value : undefined);
