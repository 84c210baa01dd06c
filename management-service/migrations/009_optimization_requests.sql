-- Optimizer requests and their results (docs/adr/0021-optimizations.md).

-- One row per request sent to the optimizer: every attempt of an optimization is a fresh
-- request_id (the Nats-Msg-Id of its message). `inputs_digest` fingerprints what the request was
-- built from (holdings, divest_amount, policy id and version): a result whose portfolio has
-- changed since is stale and is asked again. `result_at` is set once, by the first result of the
-- request (the same result delivered twice is stored once); `outcome` says what became of it.
-- `timed_out_at` marks a request the time-out job gave up waiting for (a later attempt follows, or
-- the optimization failed); its result may still arrive and is then taken if still useful.
create table optimization_requests (
  request_id      text primary key,
  tenant_id       text not null references tenants (id),
  optimization_id text not null,
  portfolio_id    text not null,
  reason          text not null check (reason in ('DEPOSIT', 'DIVEST_AMOUNT', 'HOLDINGS', 'POLICY', 'SCHEDULED', 'OPERATOR', 'REOPTIMIZE')),
  attempt         integer not null check (attempt >= 1),
  sent_at         timestamptz not null,
  inputs_digest   text not null,
  timed_out_at    timestamptz,
  result_at       timestamptz,
  result_status   text check (result_status in ('SUCCESS', 'FAILURE', 'INFEASIBLE', 'NOT_OPTIMIZED')),
  outcome         text check (outcome in ('STORED', 'LATE', 'STALE')),
  unique (tenant_id, optimization_id, attempt),
  check ((result_at is null) = (outcome is null))
);
-- The time-out job's work: the newest attempt of each optimization, still unanswered, oldest first.
create index optimization_requests_waiting on optimization_requests (sent_at) where result_at is null and timed_out_at is null;

-- Not forced: the time-out job, running as the owning role, finds every tenant's waiting requests;
-- request transactions and the result consumer (as platform_tenant) see their tenant's only.
alter table optimization_requests enable row level security;
create policy tenant_isolation on optimization_requests
  using (tenant_id = current_setting('app.tenant_id', true))
  with check (tenant_id = current_setting('app.tenant_id', true));
grant select, insert, update on optimization_requests to platform_tenant;

-- At most one PENDING optimization per portfolio: the gate checks it under the portfolio's row
-- lock; this index makes a slip an error instead of a second request.
create unique index entities_one_pending_optimization on entities (tenant_id, parent_id)
  where type = 'optimizations' and doc ->> 'status' = 'PENDING';

-- The robo portfolios that follow a policy (a change of the policy asks the optimizer for each).
create index entities_portfolio_policy on entities (tenant_id, platform_text(doc, '{config,manager_settings,policy_id}'))
  where type = 'portfolios' and platform_text(doc, '{config,manager_settings,policy_id}') is not null;
create statistics entities_policy_stats on (platform_text(doc, '{config,manager_settings,policy_id}')) from entities;

-- The nightly optimization batch: one row per UTC day it completed. The replica that runs it
-- holds an advisory lock and writes the row in the transaction that spans the run, so a second
-- replica (or a restart) finds the day done and runs nothing.
create table optimizer_nightly_runs (
  day         date primary key,
  started_at  timestamptz not null,
  finished_at timestamptz not null,
  tenants     integer not null,
  portfolios  integer not null,
  requested   integer not null
);
