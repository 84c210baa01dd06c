import type { Money } from '@platform/shared';
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
  /**
   * True when a client's request wrote the entity (its POST, PATCH or DELETE); false when one of the service's flows
   * did (a deposit, a withdrawal, an execution), which asks for what it causes itself.
   */
  byClient: boolean;
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
  /** Asks the optimizer to optimize the changed portfolio (flows/optimization/request.ts decides whether it may). */
  requestOptimization: (reason: OptimizationReason) => Promise<void>;
  /** Asks the optimizer to optimize every robo-advised portfolio that follows the changed policy, each through the gate. */
  requestOptimizationsOfPolicy: (reason: OptimizationReason) => Promise<void>;
  /**
   * Pays out the changed portfolio's divest_amount when the service integrates the broker and the cash already covers
   * it (flows/withdrawal-queue.ts decides whether it may; docs/adr/0022-execution-and-withdrawals.md).
   */
  payOutDivestAmount: () => Promise<void>;
  /** The cash of the changed portfolio held for its instructions still with the broker (domain/cash-holds.ts). */
  heldCash: () => Promise<Money>;
  /** Refuses the access tokens whose subject is the changed entity. */
  revokeTokens: (reason: 'user_deleted') => Promise<void>;
};

/** What a write of one kind causes besides the entity itself. */
export type EntityEffects = (change: EntityChange, ports: EffectPorts) => Promise<void>;
