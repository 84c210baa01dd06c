import type { components } from '@platform/api-types/data';
import type { OperationHandler } from '@platform/shared';
import type { DataPrincipal } from '../../auth/api-keys.ts';
import { pairSeriesAnswer, seriesToArrow } from '../../fx/series.ts';
import type { FxCurrencies, FxReader } from '../../fx/store.ts';
import { queryOne } from '../query-params.ts';
import { JSON_TYPE, negotiate } from '../representation.ts';

/** GET /data/fx-rates/{base}/{quote} (JSON and Arrow): the same rates for every tenant. */
export function fxRateHandlers(rates: { read: FxReader; currencies: FxCurrencies }): Record<string, OperationHandler<DataPrincipal>> {
  return {
    getFxRates: async (ctx) => {
      const contentType = negotiate(ctx);
      const request = {
        base: String(ctx.params.base),
        quote: String(ctx.params.quote),
        from: queryOne(ctx.query.from)!,
        to: queryOne(ctx.query.to)!,
      };
      const points = await pairSeriesAnswer(request, rates.read, rates.currencies);
      if (contentType !== JSON_TYPE) return { status: 200, body: seriesToArrow(points), contentType };
      const body: components['schemas']['FxRatesResponse'] = { data: { ...request, rates: points }, meta: null };
      return { status: 200, body };
    },
  };
}
