import assert from 'node:assert/strict';
import { dataClient } from './clients.ts';

/** Two EUR equity ETFs and an EUR bond ETF. */
export type SampleModel = { equity: string[]; bonds: string[] };

/**
 * ETFs of the sample universe priced in EUR, for the model portfolio of a test's policy (the optimizer prices orders
 * in the base currency): two of the equity class, one of fixed income, read through the data interface.
 */
export async function eurEtfModel(dataUrl: string, tenant: { tenantId: string; apiKey: string }): Promise<SampleModel> {
  const reference = await dataClient(dataUrl, tenant.tenantId, tenant.apiKey).GET('/data/reference/universe/', {
    params: { query: { universe_name: 'GLOBAL', fields: ['INSTRUMENT_TYPE', 'ASSET_CLASS', 'CURRENCY', 'PRICE'] } },
  });
  assert.equal(reference.response.status, 200);
  const etfs = Object.entries((reference.data as { data: Record<string, Record<string, unknown>> }).data).filter(
    ([, f]) => f.instrument_type === 'ETF' && f.currency === 'EUR' && typeof f.price === 'number',
  );
  const of = (assetClass: string) => etfs.filter(([, f]) => f.asset_class === assetClass).map(([isin]) => isin);
  const model = { equity: of('EQUITY').slice(0, 2), bonds: of('FIXED_INCOME').slice(0, 1) };
  assert.equal(model.equity.length, 2, 'two EUR equity ETFs in the sample');
  assert.equal(model.bonds.length, 1, 'an EUR bond ETF in the sample');
  return model;
}

/** Equity ETFs of the sample priced in dollars and a bond ETF priced in EUR, for a EUR portfolio that buys in dollars. */
export type DollarModel = { usdEquity: string[]; eurBonds: string[] };

/**
 * The model of the demo's policy in dollars (data-service/src/sample/demo-policies.ts, demoForeignPolicy) for a test:
 * up to two equity ETFs priced in USD and one bond ETF priced in EUR, read through the data interface.
 */
export async function dollarEtfModel(dataUrl: string, tenant: { tenantId: string; apiKey: string }): Promise<DollarModel> {
  const reference = await dataClient(dataUrl, tenant.tenantId, tenant.apiKey).GET('/data/reference/universe/', {
    params: { query: { universe_name: 'GLOBAL', fields: ['INSTRUMENT_TYPE', 'ASSET_CLASS', 'CURRENCY', 'PRICE'] } },
  });
  assert.equal(reference.response.status, 200);
  const etfs = Object.entries((reference.data as { data: Record<string, Record<string, unknown>> }).data).filter(
    ([, f]) => f.instrument_type === 'ETF' && typeof f.price === 'number',
  );
  const of = (assetClass: string, currency: string) => etfs.filter(([, f]) => f.asset_class === assetClass && f.currency === currency).map(([isin]) => isin);
  const model = { usdEquity: of('EQUITY', 'USD').slice(0, 2), eurBonds: of('FIXED_INCOME', 'EUR').slice(0, 1) };
  assert.ok(model.usdEquity.length > 0, 'a USD equity ETF in the sample');
  assert.equal(model.eurBonds.length, 1, 'an EUR bond ETF in the sample');
  return model;
}
