import { FACTORS, GROUP_SPLITS, starsColumn, type GroupSplitType } from './factors.ts';

/**
 * SQL of the X-Ray stars (columns `isin` and one `<factor>_stars` per factor) of the instruments of
 * the relation `answer`, ranked among the instruments of the relation `norm` (both relations of
 * `isin`, defined by the caller), within each group of `split` (default: one group).
 *
 * Stars are the quintile of the instrument's metric by mid-rank: with n members of the group
 * holding the metric, b of them below the instrument's value and e equal to it,
 *   stars = min(5, 1 + floor(5 · (b + e/2) / n)),
 * in exact integer arithmetic. Ties therefore share one star value (never split arbitrarily as
 * ntile would), n divisible by 5 gives exact quintiles, and a lone member gets 3 stars. An
 * instrument of `answer` outside `norm` is placed within the normalization distribution the same
 * way (e = its equals in `norm`). A null (or NaN) metric, or a group with no metric, gives null.
 * All counts are window functions over the union of both relations, counting `norm` members only
 * (cast to BIGINT: arithmetic on the HUGEINT that sum() returns is several times slower). In
 * integers: b + e/2 = (lt + le) / 2 with lt members strictly below and le at or below the value.
 */
export function starsSql(ref: string, split: GroupSplitType | undefined, norm: string, answer: string): string {
  const groups = split ? GROUP_SPLITS[split].map((c) => `p.${c}`) : [];
  const partition = () => (groups.length ? `partition by ${groups.join(', ')}` : '');
  const counts = FACTORS.map(({ metric }) => {
    const m = `p.${metric}`;
    const member = `case when p.in_norm and ${m} is not null then 1 else 0 end`;
    // One ordering per factor serves both counts: at or below the value, and strictly below it.
    const below = `${partition()} order by ${m} asc nulls last range between unbounded preceding and`;
    return [
      `${m}`,
      `(sum(${member}) over (${below} current row))::bigint as ${metric}_le`,
      // An empty frame (the lowest value) sums to null.
      `coalesce(sum(${member}) over (${below} current row exclude group), 0)::bigint as ${metric}_lt`,
      `(sum(${member}) over (${partition()}))::bigint as ${metric}_n`,
    ].join(',\n        ');
  });
  const stars = FACTORS.map(({ field, metric }) => {
    const [m, le, lt, n] = [`r.${metric}`, `r.${metric}_le`, `r.${metric}_lt`, `r.${metric}_n`];
    return `case when ${m} is null or ${n} = 0 then null else least(5, 1 + (5 * (${lt} + ${le})) // (2 * ${n}))::integer end as ${starsColumn(field)}`;
  });
  return `select r.isin,
      ${stars.join(',\n      ')}
    from (
      select p.isin, p.in_answer,
        ${counts.join(',\n        ')}
      from (
        select x.isin, i.region, i.sector, i.size_label,
          ${FACTORS.map((f) => `case when isnan(fm.${f.metric}) then null else fm.${f.metric} end as ${f.metric}`).join(',\n          ')},
          x.isin in (select isin from ${norm}) as in_norm,
          x.isin in (select isin from ${answer}) as in_answer
        from (select isin from ${norm} union select isin from ${answer}) x
        left join ${ref}.instruments i on i.isin = x.isin
        left join ${ref}.factor_metrics fm on fm.isin = x.isin
      ) p
    ) r
    where r.in_answer`;
}
