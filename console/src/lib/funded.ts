/**
 * What "Funded since" means on the portfolio page. The stored `funded_since` is written once, at
 * the first deposit that reaches the policy's minimum funding amount (or when a machine client
 * sets it), and never cleared: a portfolio paid out to nothing keeps it, and one given holdings
 * directly never gets it. So the page derives it from the data instead: not funded while the
 * portfolio holds no cash and no position; otherwise funded since its first settled deposit. A
 * portfolio that holds something without any settled deposit (holdings written directly) is
 * funded since an unknown time, and the stored value is shown as what it is. Pure.
 */
export type CashTransaction = { type?: unknown; status?: unknown; quantity?: unknown; datetime?: unknown };
export type Funded = { state: 'empty'; stored?: string } | { state: 'deposit'; since: string; stored?: string } | { state: 'unknown'; stored?: string };

export function holdsSomething(holdings: Record<string, unknown>): boolean {
  return Object.values(holdings).some((quantity) => typeof quantity === 'number' && quantity !== 0);
}

/** The first settled deposit of `transactions` (any order): a SETTLED CASH transaction of a positive amount. */
export function firstDeposit(transactions: readonly CashTransaction[]): string | undefined {
  const times = transactions
    .filter((t) => t.type === 'CASH' && t.status === 'SETTLED' && typeof t.quantity === 'string' && /^[0-9.]+$/.test(t.quantity) && /[1-9]/.test(t.quantity))
    .map((t) => t.datetime)
    .filter((time): time is string => typeof time === 'string')
    .sort((a, b) => Date.parse(a) - Date.parse(b));
  return times[0];
}

export function fundedSince(holdings: Record<string, unknown>, transactions: readonly CashTransaction[], stored: unknown): Funded {
  const kept = typeof stored === 'string' && stored ? { stored } : {};
  if (!holdsSomething(holdings)) return { state: 'empty', ...kept };
  const since = firstDeposit(transactions);
  return since ? { state: 'deposit', since, ...kept } : { state: 'unknown', ...kept };
}
