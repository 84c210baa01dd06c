-- The nightly retention job (docs/adr/0061-retention.md): one row per UTC day it completed, with the
-- rows each rule removed. The replica that runs it holds an advisory lock and writes the row in the
-- transaction that spans the run, so a second replica (or a restart) finds the day done. A run cut
-- off half-way writes no row and is run again; every batch it removed stays removed.
create table retention_runs (
  day         date primary key,
  started_at  timestamptz not null,
  finished_at timestamptz not null,
  deleted     jsonb not null check (jsonb_typeof(deleted) = 'object')
);

-- The place (xid, seq) of the last outbox row the retention removed, per tenant: GET /events/ with a
-- cursor below it answers that events after the cursor are gone, instead of skipping them silently.
create table outbox_retention_horizons (
  tenant_id text primary key references tenants (id),
  xid       xid8 not null,
  seq       bigint not null
);

-- Not forced: the retention job, running as the owning role, writes every tenant's row; the feed
-- (as platform_tenant) reads its tenant's.
alter table outbox_retention_horizons enable row level security;
create policy tenant_isolation on outbox_retention_horizons
  using (tenant_id = current_setting('app.tenant_id', true));
grant select on outbox_retention_horizons to platform_tenant;
