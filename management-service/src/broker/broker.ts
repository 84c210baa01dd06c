/**
 * The broker as the service sees it when it drives the broker itself: REAL_MONEY portfolios of tenants with SERVICE
 * broker integration (the configured broker) and every PAPER_MONEY portfolio (the built-in simulated broker). A real
 * broker adapter implements this interface (docs/adr/0009-funding-modes.md, docs/adr/0022-execution-and-withdrawals.md).
 *
 * Both operations carry the instruction id: a broker must execute an id at most once however often it is sent, and
 * answer a repeated id with the first execution's result. The settlement job sends an instruction again after a crash
 * or a thrown error (a transient failure: nothing is booked, it is retried later).
 */
export type CashMove = {
  id: string;
  tenantId: string;
  portfolioId: string;
  /** TO_SUBACCOUNT: a deposit, from the bank's house account to the customer's subaccount; TO_HOUSE_ACCOUNT: a withdrawal, back. */
  direction: 'TO_SUBACCOUNT' | 'TO_HOUSE_ACCOUNT';
  /** A positive decimal string. */
  amount: string;
  currency: string;
};

export type CashMoveResult = { status: 'SETTLED'; reference: string } | { status: 'REJECTED'; reason: string };

/**
 * One order: decimal strings; `shares` negative for a sell; `price` the limit the optimizer expected, per share in
 * `currency`, the instrument's (another than the account's base currency for an instrument quoted elsewhere).
 */
export type BrokerOrder = { isin: string; shares: string; price: string; currency: string };

export type OrderRequest = {
  id: string;
  tenantId: string;
  portfolioId: string;
  /** The portfolio's base currency: the account's, which pays the transaction costs and buys other currencies. */
  currency: string;
  orders: BrokerOrder[];
};

/** What was executed for one ISIN: `shares` signed like the order's, at `price` per share in `currency`, the instrument's. */
export type BrokerFill = { isin: string; shares: string; price: string; currency: string; reference: string };

/** FILLED: the orders as executed, one fill per ordered ISIN; REJECTED: nothing was executed. */
export type OrdersResult = { status: 'FILLED'; fills: BrokerFill[] } | { status: 'REJECTED'; reason: string };

export interface Broker {
  moveCash(move: CashMove): Promise<CashMoveResult>;
  placeOrders(request: OrderRequest): Promise<OrdersResult>;
}
