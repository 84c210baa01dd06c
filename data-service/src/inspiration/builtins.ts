import type { components } from '@platform/api-types/data';

export type InspirationDefinition = components['schemas']['InspirationDefinition'];

/**
 * The platform's inspirations, the same for every tenant. They live here in code (versioned and
 * reviewed with the filters they use) rather than as rows: a tenant's custom definitions are rows
 * of the main `inspirations` table, and an id used here can never be taken by one (409). SIZE
 * stars grow with company size (xray/factors.ts), so small caps are the low SIZE stars.
 */
export const BUILTIN_INSPIRATIONS: readonly InspirationDefinition[] = [
  {
    id: 'high_dividend',
    name: 'High dividend',
    description: 'Instruments in the top two fifths of dividend payers.',
    type: 'theme',
    custom: false,
    query: { xray: '$DIVIDEND_STARS >= 4' },
  },
  {
    id: 'momentum_leaders',
    name: 'Momentum leaders',
    description: 'The strongest fifth by price momentum.',
    type: 'inspiration',
    custom: false,
    query: { xray: '$MOMENTUM_STARS == 5' },
  },
  {
    id: 'quality',
    name: 'Quality',
    description: 'Profitable companies with strong balance sheets and steady results.',
    type: 'theme',
    custom: false,
    query: { xray: '$PROFITABILITY_STARS >= 4 & $FINANCIAL_HEALTH_STARS >= 4 & $STABILITY_STARS >= 3' },
  },
  {
    id: 'quality_dividends',
    name: 'Quality dividends',
    description: 'Companies with high dividend scores and strong financial health.',
    type: 'metatheme',
    custom: false,
    query: { xray: '$DIVIDEND_STARS >= 4 & $FINANCIAL_HEALTH_STARS >= 4' },
  },
  {
    id: 'small_caps',
    name: 'Small caps',
    description: 'The smaller two fifths of companies by size.',
    type: 'inspiration',
    custom: false,
    query: { xray: '$SIZE_STARS <= 2' },
  },
  {
    id: 'value',
    name: 'Value',
    description: 'Instruments that look cheap against their fundamentals.',
    type: 'inspiration',
    custom: false,
    query: { xray: '$VALUE_STARS >= 4' },
  },
];

export const builtinInspiration = (id: string) => BUILTIN_INSPIRATIONS.find((d) => d.id === id);
