// The optimizer's rates from the reference data's exchange rates (docs/adr/0057-fx-rates.md,
// docs/adr/0020-optimizer-model.md): each currency's value in the base currency is the cross rate
// through EUR on the request's day, every leg within the age the service allows.
import { toText } from '@platform/shared';
import { crossRate, FX_BASE, FxRateUnavailable, rateOnOrBefore, type FxRates } from '../fx/convert.ts';
import type { FxReader } from '../fx/store.ts';
import type { RateFact, RatesReader } from './rates.ts';

export function referenceRates(read: FxReader, maxAgeDays: number): RatesReader {
  return async (base, currencies, asOf) => {
    const rates = await read([base, ...currencies], { from: asOf, to: asOf });
    return new Map(currencies.map((currency) => [currency, rateFact(rates, currency, base, asOf, maxAgeDays)]));
  };
}

/** Units of `base` per unit of `currency`, dated by its older leg; or the refusal naming the pair. */
function rateFact(rates: FxRates, currency: string, base: string, asOf: string, maxAgeDays: number): RateFact {
  try {
    const rate = crossRate(rates, currency, base, asOf, maxAgeDays);
    const dates = [currency, base].filter((c) => c !== FX_BASE).map((c) => rateOnOrBefore(rates.get(c) ?? [], asOf)!.date);
    return { rate: toText(rate), date: dates.sort()[0] ?? asOf };
  } catch (error) {
    if (error instanceof FxRateUnavailable) return { refusal: error.reason, detail: error.message };
    throw error;
  }
}
