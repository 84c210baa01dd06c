/**
 * The broker as the service sees it when it integrates the broker itself (SERVICE integration).
 * The built-in simulated broker implements it; a real broker integration replaces it.
 */
export type CashMove = {
  /** The instruction id: a broker must execute a move at most once per id, however often it is sent. */
  id: string;
  tenantId: string;
  portfolioId: string;
  /** Deposit: from the bank's house account to the customer's subaccount. */
  direction: 'TO_SUBACCOUNT';
  amount: string;
  currency: string;
};

export type CashMoveResult = { status: 'SETTLED'; reference: string } | { status: 'REJECTED'; reason: string };

export interface Broker {
  moveCash(move: CashMove): Promise<CashMoveResult>;
}
