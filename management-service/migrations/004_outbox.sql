-- Outbound events, written in the same transaction as the change that causes them (outbox).
-- `xid` is the writing transaction's id: GET /events/ hands out only rows of transactions older
-- than every transaction still running (docs/adr/0002-event-feed-cursor.md), so a late commit is never skipped.

create table outbox (
  seq          bigserial primary key,
  tenant_id    text not null references tenants (id),
  event_id     text not null unique,
  entity_id    text not null,
  subject      text not null,
  action       text not null,
  envelope     jsonb not null,
  created_at   timestamptz not null,
  xid          xid8 not null default pg_current_xact_id(),
  published_at timestamptz
);
create index outbox_unpublished on outbox (seq) where published_at is null;
create index outbox_tenant_order on outbox (tenant_id, xid, seq);

-- Not forced: the relay, running as the owning role, publishes every tenant's events; request
-- transactions (as platform_tenant) see their tenant's only.
alter table outbox enable row level security;
create policy tenant_isolation on outbox
  using (tenant_id = current_setting('app.tenant_id', true))
  with check (tenant_id = current_setting('app.tenant_id', true));
grant select, insert on outbox to platform_tenant;
grant usage on sequence outbox_seq_seq to platform_tenant;
