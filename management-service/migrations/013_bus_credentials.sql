-- Credentials of a tenant's subscribers on the event bus (NATS and its MQTT listener,
-- docs/adr/0026-bus-authorization.md). The password is shown once and kept only as its bcrypt hash,
-- the form nats-server reads from its configuration. Like access_keys and api_keys, this is a
-- platform table without row-level security: the renderer of the server's users reads every
-- tenant's rows; no tenant-scoped request ever reads it.
create table bus_credentials (
  id            text primary key,
  tenant_id     text not null references tenants (id),
  password_hash text not null check (password_hash like '$2_$%'),
  description   text,
  created_at    timestamptz not null default now(),
  revoked_at    timestamptz
);
create index bus_credentials_tenant_id on bus_credentials (tenant_id);
-- The renderer reads the credentials that still work, every few seconds.
create index bus_credentials_active on bus_credentials (id) where revoked_at is null;
