import type { Doc } from './merge.ts';

/**
 * Who deals with the broker for a portfolio (docs/adr/0022-execution-and-withdrawals.md): the service for every
 * PAPER_MONEY portfolio (on the built-in simulated broker) and for REAL_MONEY ones when the tenant lets it integrate
 * the broker; the Client Middleware otherwise. The service then places the orders and pays out divest_amount.
 */
export const serviceExecutes = (brokerIntegration: 'CLIENT' | 'SERVICE', portfolio: Doc): boolean =>
  portfolio.money_type === 'PAPER_MONEY' || brokerIntegration === 'SERVICE';

/** Which broker the service uses: the built-in simulated one for PAPER_MONEY, the configured one otherwise. */
export const brokerFor = (portfolio: Doc): 'PAPER' | 'CONFIGURED' => (portfolio.money_type === 'PAPER_MONEY' ? 'PAPER' : 'CONFIGURED');
