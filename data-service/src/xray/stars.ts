import { FACTORS, GROUP_SPLITS, starsColumn, type GroupSplitType, type XrayFactor } from './factors.ts';

/**
 * SQL of the X-Ray stars (columns `isin` and one `<factor>_stars` per factor of `factors`, default
 * all, in FACTORS order) of the instruments of the relation `answer`, ranked among the instruments
 * of the relation `norm` (both relations of `isin`, defined by the caller; the same name when they
 * hold the same instruments), within each group of `split` (default: one group).
 *
 * Stars are the quintile of the instrument's metric by mid-rank: with n members of the group
 * holding the metric, b of them below the instrument's value and e equal to it,
 *   stars = min(5, 1 + floor(5 · (b + e/2) / n)),
 * in exact integer arithmetic. Ties therefore share one star value (never split arbitrarily as
 * ntile would), n divisible by 5 gives exact quintiles, and a lone member gets 3 stars. An
 * instrument of `answer` outside `norm` is placed within the normalization distribution the same
 * way (e = its equals in `norm`). A null (or NaN) metric, or a group with no metric, gives null.
 *
 * One window ordering per factor (group, metric) gives every count: over the rows of both
 * relations, count() of the metric of `norm` members (null for the others) counts members with a
 * metric only, while every row takes its place in the ordering. le (members at or below the value)
 * is the count over the frame up to the row's last peer, e over its peers alone, b = le − e; in
 * integers b + e/2 = (2·le − e) / 2. (Sums of a CASE with an `exclude group` frame, which this
 * replaces, took 1.4 times as long on 100,000 instruments.) When both relations are one, every row
 * is a member.
 */
export function starsSql(
  ref: string,
  split: GroupSplitType | undefined,
  norm: string,
  answer: string,
  factors: readonly XrayFactor[] = FACTORS.map((f) => f.field),
): string {
  const chosen = FACTORS.filter((f) => factors.includes(f.field));
  const same = norm === answer;
  const groups = split ? GROUP_SPLITS[split].map((c) => `p.${c}`) : [];
  const partition = groups.length ? `partition by ${groups.join(', ')}` : '';
  const counts = chosen.map(({ metric }) => {
    const m = `p.${metric}`;
    const member = same ? m : `case when p.in_norm then ${m} end`;
    const frame = `${partition} order by ${m} asc nulls last range between`;
    return [
      m,
      `count(${member}) over (${frame} unbounded preceding and current row) as ${metric}_le`,
      `count(${member}) over (${frame} current row and current row) as ${metric}_e`,
      `count(${member}) over (${partition}) as ${metric}_n`,
    ].join(',\n        ');
  });
  const stars = chosen.map(({ field, metric }) => {
    const [m, le, e, n] = [`r.${metric}`, `r.${metric}_le`, `r.${metric}_e`, `r.${metric}_n`];
    return `case when ${m} is null or ${n} = 0 then null else least(5, 1 + (5 * (2 * ${le} - ${e})) // (2 * ${n}))::integer end as ${starsColumn(field)}`;
  });
  // Each instrument once, with whether it is a member of `norm` and whether it is answered.
  const rows = same
    ? `(select distinct isin from ${answer})`
    : `(select isin, bool_or(n) as in_norm, bool_or(a) as in_answer
          from (select isin, true as n, false as a from ${norm} union all select isin, false, true from ${answer}) group by isin)`;
  return `select r.isin${stars.map((s) => `,\n      ${s}`).join('')}
    from (
      select p.isin${same ? '' : ', p.in_answer'}${counts.map((c) => `,\n        ${c}`).join('')}
      from (
        select x.*, i.region, i.sector, i.size_label${chosen.map((f) => `,\n          case when isnan(fm.${f.metric}) then null else fm.${f.metric} end as ${f.metric}`).join('')}
        from ${rows} x
        left join ${ref}.instruments i on i.isin = x.isin
        left join ${ref}.factor_metrics fm on fm.isin = x.isin
      ) p
    ) r${same ? '' : '\n    where r.in_answer'}`;
}
