/**
 * The X-Ray factors: `<NAME>_STARS` from the raw metric `factor_metrics.<name>` of the reference
 * data. For every factor a higher stored metric earns more stars (5 is best): the reference data
 * stores each metric oriented that way (value: cheapness, stability: steadiness, size: company
 * size, dividend: payout). A factor whose direction were reversed would say so here.
 */
export const FACTORS = [
  { field: 'VALUE_STARS', metric: 'value' },
  { field: 'GROWTH_STARS', metric: 'growth' },
  { field: 'MOMENTUM_STARS', metric: 'momentum' },
  { field: 'STABILITY_STARS', metric: 'stability' },
  { field: 'FINANCIAL_HEALTH_STARS', metric: 'financial_health' },
  { field: 'PROFITABILITY_STARS', metric: 'profitability' },
  { field: 'SIZE_STARS', metric: 'size' },
  { field: 'DIVIDEND_STARS', metric: 'dividend' },
] as const;

export type XrayFactor = (typeof FACTORS)[number]['field'];

export const FACTOR_NAMES: readonly string[] = FACTORS.map((f) => f.field);

/** SQL column of a factor's stars in the stars relation (`value_stars`). */
export const starsColumn = (field: XrayFactor) => field.toLowerCase();

export const isFactor = (name: string): name is XrayFactor => FACTOR_NAMES.includes(name);

/** Groupings of `group_split_type`: the instrument columns whose values form one ranking group. */
export const GROUP_SPLITS = {
  REGION: ['region'],
  SECTOR: ['sector'],
  REGION_SECTOR: ['region', 'sector'],
  SIZE: ['size_label'],
  REGION_SIZE: ['region', 'size_label'],
  SECTOR_SIZE: ['sector', 'size_label'],
  REGION_SECTOR_SIZE: ['region', 'sector', 'size_label'],
} as const;

export type GroupSplitType = keyof typeof GROUP_SPLITS;
