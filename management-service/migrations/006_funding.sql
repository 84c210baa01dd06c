-- Funding and withdrawal flows (docs/adr/0009-funding-modes.md, docs/adr/0010-idempotency-key.md).

-- The Idempotency-Key table, created here at first, is the shared package's (both services keep
-- keys in it): shared/migrations/006_idempotency_keys.sql.

-- Internal messages (optimizer requests) travel through the outbox too, to their own NATS subject;
-- null means the tenant's event subject. GET /events/ serves tenant events only.
alter table outbox add column nats_subject text;
drop index outbox_tenant_order;
create index outbox_tenant_order on outbox (tenant_id, xid, seq) where nats_subject is null;

-- Cash moves handed to the broker (SERVICE integration), written with the PENDING transaction;
-- the settlement job executes them and books the result.
create table broker_instructions (
  id             text primary key,
  tenant_id      text not null references tenants (id),
  kind           text not null check (kind in ('DEPOSIT')),
  portfolio_id   text not null,
  transaction_id text not null,
  amount         numeric not null check (amount > 0),
  currency       text not null,
  created_at     timestamptz not null,
  not_before     timestamptz not null,
  attempts       integer not null default 0,
  last_error     text,
  settled_at     timestamptz
);
create index broker_instructions_due on broker_instructions (not_before) where settled_at is null;

alter table broker_instructions enable row level security;
create policy tenant_isolation on broker_instructions
  using (tenant_id = current_setting('app.tenant_id', true))
  with check (tenant_id = current_setting('app.tenant_id', true));
grant select, insert, update on broker_instructions to platform_tenant;

-- Executed withdrawals reported by the Client Middleware (POST /events/withdraw/).
create table withdrawals (
  tenant_id             text not null references tenants (id),
  portfolio_id          text not null,
  amount                numeric not null check (amount > 0),
  currency              text not null,
  external_id           text,
  transaction_id        text,
  notification_event_id text not null,
  recorded_at           timestamptz not null,
  primary key (tenant_id, notification_event_id)
);
create unique index withdrawals_external_id on withdrawals (tenant_id, external_id) where external_id is not null;

alter table withdrawals enable row level security;
alter table withdrawals force row level security;
create policy tenant_isolation on withdrawals
  using (tenant_id = current_setting('app.tenant_id', true))
  with check (tenant_id = current_setting('app.tenant_id', true));
grant select, insert on withdrawals to platform_tenant;
