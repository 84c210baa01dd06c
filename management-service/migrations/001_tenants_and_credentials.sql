-- Tenants and the credentials of their machine clients (management access keys, refresh tokens)
-- and analysts (data API keys). Secrets are never stored: access-key secrets as scrypt hashes,
-- high-entropy tokens and API keys as SHA-256 digests.

create table tenants (
  id                 text primary key check (id ~ '^[a-z][a-z0-9-]{1,62}$'),
  name               text not null,
  broker_integration text not null default 'CLIENT' check (broker_integration in ('CLIENT', 'SERVICE')),
  created_at         timestamptz not null default now(),
  disabled_at        timestamptz
);

create table access_keys (
  id          text primary key,
  tenant_id   text not null references tenants (id),
  secret_hash text not null,
  description text,
  created_at  timestamptz not null default now(),
  revoked_at  timestamptz
);
create index access_keys_tenant_id on access_keys (tenant_id);

create table refresh_tokens (
  token_hash    bytea primary key,
  access_key_id text not null references access_keys (id),
  expires_at    timestamptz not null,
  used_at       timestamptz,
  created_at    timestamptz not null default now()
);
create index refresh_tokens_expires_at on refresh_tokens (expires_at);

create table api_keys (
  id          text primary key,
  tenant_id   text not null references tenants (id),
  key_hash    bytea not null unique,
  description text,
  created_at  timestamptz not null default now(),
  revoked_at  timestamptz
);
create index api_keys_tenant_id on api_keys (tenant_id);
