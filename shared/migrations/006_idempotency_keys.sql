-- Idempotency-Keys of both services (shared/src/idempotency.ts): one row per tenant + method + path
-- + key. The row is inserted in the same transaction as the request's effect and completed with the
-- response before commit, so a key exists exactly when its effect does. A second request with the
-- same key blocks on the unique primary key until the first commits (then replays) or rolls back
-- (then runs).
--
-- Databases migrated before this file existed got the same table from management-service's
-- 006_funding.sql: every statement here is a no-op where it already exists.
create table if not exists idempotency_keys (
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
create index if not exists idempotency_keys_expiry on idempotency_keys (expires_at);

-- Not forced: the expiry job, running as the owning role, removes every tenant's expired keys.
alter table idempotency_keys enable row level security;
do $$
begin
  if not exists (select 1 from pg_policies where tablename = 'idempotency_keys' and policyname = 'tenant_isolation') then
    create policy tenant_isolation on idempotency_keys
      using (tenant_id = current_setting('app.tenant_id', true))
      with check (tenant_id = current_setting('app.tenant_id', true));
  end if;
end $$;
grant select, insert, update, delete on idempotency_keys to platform_tenant;
