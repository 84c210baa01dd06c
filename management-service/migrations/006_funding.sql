-- Funding and withdrawal flows (decisions §6, §7).

-- Idempotency-Key: one row per tenant + method + path + key. The row is inserted in the same
-- transaction as the request's effect and completed with the response before commit, so a key
-- exists exactly when its effect does. A second request with the same key blocks on the unique
-- primary key until the first commits (then replays) or rolls back (then runs).
create table idempotency_keys (
  tenant_id       text not null references tenants (id),
  method          text not null,
  path            text not null,
  key             text not null,
  request_hash    text not null,
  response_status integer,
  response_headers jsonb,
  response_body   text,
  created_at      timestamptz not null default now(),
  expires_at      timestamptz not null,
  primary key (tenant_id, method, path, key)
);
create index idempotency_keys_expiry on idempotency_keys (expires_at);

-- Not forced: the expiry job, running as the owning role, removes every tenant's expired keys.
alter table idempotency_keys enable row level security;
create policy tenant_isolation on idempotency_keys
  using (tenant_id = current_setting('app.tenant_id', true))
  with check (tenant_id = current_setting('app.tenant_id', true));
grant select, insert, update, delete on idempotency_keys to platform_tenant;

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
