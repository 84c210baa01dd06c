-- Pending withdrawals (docs/adr/0028-pending-withdrawals-index.md). The index of migration 003 held
-- every portfolio with a divest_amount, and most hold 0, so `divest_amount neq 0 and divest_amount
-- neq null` read nearly all of them. This one holds only the non-zero amounts. The compiler writes
-- that query as `platform_numeric(…) <> 0 and not (platform_numeric(…) is null)`, which implies the
-- predicate below, so the planner may use the index, also under row-level security; comparisons with
-- a value other than 0 (`gt 100`, `eq 250`) imply it too.
--
-- Keyed by id: a page in the default order walks the index and stops after `limit` rows. `deleted`
-- is included, so the count is an index-only scan. `eq 0`, `le 0` or `neq null` alone have no index
-- now: they match most portfolios, which a scan reads as fast.
drop index entities_portfolio_divest;

create index entities_portfolio_divest_pending on entities (tenant_id, id) include (deleted)
  where type = 'portfolios' and platform_numeric(doc, '{config,manager_settings,divest_amount}') <> 0;
