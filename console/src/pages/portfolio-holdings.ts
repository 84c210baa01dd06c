import { ApiProblem } from '@platform/client';
import { dataTable, empty, formatNumber, h, problemView, replace } from '../dom.ts';
import { currenciesToConvert, valueHoldings, type Instrument, type RatesByCurrency, type Valuation } from '../lib/valuation.ts';
import type { PageContext } from '../page.ts';

// The portfolio page's holdings: the instruments' prices from the data service, the rates of the
// other currencies held, and the table of positions valued in the base currency.
export type Instruments = { instruments: Record<string, Instrument>; note: HTMLElement | null };

/** NAME, PRICE and CURRENCY of the ISINs among `keys` from the data service; a note instead when it cannot be asked or fails. */
export async function readInstruments(ctx: PageContext, keys: string[]): Promise<Instruments> {
  const isins = [...new Set(keys.filter((key) => !key.startsWith('$')))];
  if (isins.length === 0) return { instruments: {}, note: null };
  if (!ctx.session.hasData) {
    return {
      instruments: {},
      note: h('p', { class: 'state notice' }, 'Instruments are not valued: sign in with a data API key to read their prices from the data service.'),
    };
  }
  try {
    const answer = await ctx.session.data<{ data: Record<string, Instrument> }>(
      'POST',
      '/data/reference/query/',
      { instrument_ids: isins, fields: ['NAME', 'PRICE', 'CURRENCY', 'PRICE_DATE'], fields_extra: [] },
      ctx.signal,
    );
    return { instruments: answer.data, note: null };
  } catch (error) {
    return {
      instruments: {},
      note: h('div', {}, h('p', { class: 'state notice' }, 'The prices could not be read from the data service:'), problemView(error)),
    };
  }
}

export type Valued = { valuation: Valuation; notes: (HTMLElement | null)[] };

const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);
/** How far before the oldest price date the rates are read: the data service's age bound, with room for holidays. */
const RATE_LOOKBACK_DAYS = 10;

/**
 * The holdings valued in the base currency: the rates of every other currency held, read from the
 * data service over the dates the values are as of (each price's date, today for cash); a series
 * that cannot be read leaves its rows unconverted, said so, never at 1.
 */
export async function valuation(ctx: PageContext, holdingsOf: Record<string, number>, read: Instruments, base: string): Promise<Valued> {
  const today = isoDay(Date.now());
  const currencies = currenciesToConvert(holdingsOf, read.instruments, base);
  const rates: RatesByCurrency = {};
  const notes: (HTMLElement | null)[] = [read.note];
  if (currencies.length > 0 && ctx.session.hasData) {
    const dates = Object.values(read.instruments).flatMap((i) => (i.price_date ? [i.price_date] : []));
    const oldest = [today, ...dates].sort()[0]!;
    const from = isoDay(Date.parse(`${oldest}T00:00:00Z`) - RATE_LOOKBACK_DAYS * 86_400_000);
    await Promise.all(
      currencies.map(async (currency) => {
        try {
          const answer = await ctx.session.data<{ data: { rates: { date: string; rate: number }[] } }>(
            'GET',
            `/data/fx-rates/${encodeURIComponent(base)}/${encodeURIComponent(currency)}?from=${from}&to=${today}`,
            undefined,
            ctx.signal,
          );
          rates[currency] = answer.data.rates;
        } catch (error) {
          // A currency the reference data has no rate of (404) is a missing rate like any other.
          if (!(error instanceof ApiProblem && error.status === 404)) {
            notes.push(
              h('div', {}, h('p', { class: 'state notice' }, `The ${base}/${currency} rates could not be read from the data service:`), problemView(error)),
            );
          }
        }
      }),
    );
  }
  return { valuation: valueHoldings(holdingsOf, read.instruments, { base, rates, asOf: today }), notes };
}

const missingText = (pair: string) => `no ${pair} rate`;

export function holdings(positions: Record<string, number>, read: Valued, base: string, area: HTMLElement): void {
  if (Object.keys(positions).length === 0) return replace(area, empty('No holdings yet.'));
  const { rows, totals, total, missing } = read.valuation;
  const converted = Object.keys(totals).some((currency) => currency !== base);
  replace(
    area,
    read.notes,
    dataTable({
      class: 'data holdings',
      caption: `Holdings and their values in ${base}`,
      head: ['Position', 'Name', 'Quantity', 'Price', 'Currency', 'Rate', `Value (${base})`],
      body: rows.map((row) =>
        h(
          'tr',
          { 'data-key': row.key, 'data-base-value': row.baseValue === undefined ? null : row.baseValue.toFixed(2), 'data-rate': row.rate?.rate ?? null },
          h('th', { scope: 'row', class: 'mono' }, row.key),
          h('td', {}, row.name),
          h('td', { class: 'num' }, formatNumber(row.quantity, row.cash ? 2 : 0)),
          h('td', { class: 'num' }, row.cash ? '' : formatNumber(row.price)),
          h('td', {}, row.currency ?? ''),
          h(
            'td',
            { class: 'num rate' },
            row.rate ? [formatNumber(row.rate.rate, 4), ' ', h('span', { class: 'hint' }, `${row.rate.pair} of ${row.rate.date}`)] : '',
            row.missingRate ? h('span', { class: 'missing-rate' }, missingText(row.missingRate)) : '',
          ),
          h(
            'td',
            { class: 'num' },
            row.baseValue !== undefined ? formatNumber(row.baseValue) : '',
            row.missingRate && row.value !== undefined ? h('span', { class: 'hint' }, `${formatNumber(row.value)} ${row.currency ?? ''}`) : '',
          ),
        ),
      ),
      foot: [
        h(
          'tr',
          { class: 'total', 'data-total': total === undefined ? null : total.toFixed(2) },
          h(
            'th',
            { scope: 'row', colspan: '6' },
            `Total in ${base}`,
            missing.length ? ` (${missing.map(missingText).join(', ')}: those positions left out)` : '',
          ),
          h('td', { class: 'num' }, formatNumber(total)),
        ),
        converted
          ? Object.entries(totals).map(([currency, sum]) =>
              h(
                'tr',
                { class: 'per-currency' },
                h('th', { scope: 'row', colspan: '6' }, `Held in ${currency}`),
                h('td', { class: 'num' }, `${formatNumber(sum)} ${currency}`),
              ),
            )
          : null,
      ],
    }),
  );
}
