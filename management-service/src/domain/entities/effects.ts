import type { OutboundEvent, Owner } from '../events.ts';
import type { Doc, Json } from '../merge.ts';
import type { OptimizationReason } from '../optimization-request.ts';

/** An entity as a change's effects see it. */
export type ChangedEntity = { id: string; doc: Doc; deleted: boolean };

/** Events a flow adds to those of a portfolio change (a deposit's notification), given the owner. */
export type ExtraEvents = (owner: Owner, after: { id: string; doc: Doc }) => OutboundEvent[];

/** One write of an entity: `before` is absent when it was created. */
export type EntityChange = {
  before?: ChangedEntity;
  after: ChangedEntity;
  now: string;
  brokerIntegration: 'CLIENT' | 'SERVICE';
  /** A flow's own events, written in one insert with those of the change. */
  extra?: ExtraEvents;
};

/**
 * What a kind's effects may read and cause, all in the transaction of the change: the flow that
 * writes the entity provides them, so the rules of which effects follow stay with the kind.
 */
export type EffectPorts = {
  /** The owner a user id names (its id and external id), if that user exists. */
  ownerOf: (userId: Json | undefined) => Promise<Owner | undefined>;
  /** An entity of the tenant by type and id, deleted ones included. */
  find: (type: string, id: string) => Promise<{ id: string; doc: Doc } | undefined>;
  /** Writes outbound events to the outbox. */
  emit: (events: OutboundEvent[]) => Promise<void>;
  /** Asks the optimizer to optimize the changed portfolio (flows/optimization.ts decides whether it may). */
  requestOptimization: (reason: OptimizationReason) => Promise<void>;
  /** Refuses the access tokens whose subject is the changed entity. */
  revokeTokens: (reason: 'user_deleted') => Promise<void>;
};

/** What a write of one kind causes besides the entity itself. */
export type EntityEffects = (change: EntityChange, ports: EffectPorts) => Promise<void>;
