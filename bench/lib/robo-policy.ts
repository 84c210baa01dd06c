// The robo-advice policy the optimizer benchmarks share: two equity ETFs and one bond ETF of the
// sample universe, all quoted in EUR, with the cash buffer, costs and bands of a balanced mandate.

/** The body of `POST /policies/` for that policy, its ETFs read from the data service's GLOBAL universe. */
export async function threeEtfPolicy(options: { dataUrl: string; tenantId: string; apiKey: string; name: string }) {
  const response = await fetch(`${options.dataUrl}/data/reference/universe/?universe_name=GLOBAL&fields=INSTRUMENT_TYPE&fields=ASSET_CLASS&fields=CURRENCY`, {
    headers: { 'x-tenant-id': options.tenantId, 'x-api-key': options.apiKey },
  });
  if (response.status !== 200) throw new Error(`GET /data/reference/universe/: ${response.status} ${await response.text()}`);
  const universe = (await response.json()) as { data: Record<string, Record<string, unknown>> };
  const etfs = (assetClass: string) =>
    Object.entries(universe.data)
      .filter(([, f]) => f.instrument_type === 'ETF' && f.currency === 'EUR' && f.asset_class === assetClass)
      .map(([isin]) => isin);
  const [e1, e2] = etfs('EQUITY');
  const [b1] = etfs('FIXED_INCOME');
  if (!e1 || !e2 || !b1) throw new Error('the sample universe has too few EUR ETFs for the policy: give it more instruments');
  return {
    name: options.name,
    config: {
      cash_buffer: 0.02,
      transaction_cost_bps: 10,
      model_portfolio: { [e1]: 0.4, [e2]: 0.2, [b1]: 0.38 },
      asset_class_bands: { EQUITY: [0.5, 0.7], FIXED_INCOME: [0.28, 0.48] },
    },
  };
}

/** The body of `POST /portfolios/` for a discretionary robo-advised paper portfolio of €10,000 cash under `policyId`. */
export const roboPaperPortfolio = (options: { name: string; ownerId: string; policyId: string }) => ({
  name: options.name,
  owned_by_user_id: options.ownerId,
  base_currency: 'EUR',
  money_type: 'PAPER_MONEY',
  portfolio: { $EUR: 10_000 },
  config: { manager: 'ROBO_ADVISOR_DISCRETIONARY', manager_version: 1, manager_settings: { policy_id: options.policyId } },
});
