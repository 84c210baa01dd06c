-- Refresh-token chains and access-token revocation (README, Tenants and credentials).

-- A chain (family) starts at login; every refresh token rotated from it stays in it. Using a
-- spent refresh token again revokes the chain, so the thief and the holder both lose it.
create table refresh_token_families (
  id             text primary key,
  access_key_id  text not null references access_keys (id),
  created_at     timestamptz not null default now(),
  revoked_at     timestamptz,
  revoked_reason text check (revoked_reason in ('refresh_token_reuse', 'access_key_revoked'))
);
create index refresh_token_families_access_key on refresh_token_families (access_key_id) where revoked_at is null;

-- Refresh tokens issued before chains existed start one each.
alter table refresh_tokens add column family_id text;
update refresh_tokens set family_id = 'legacy-' || encode(token_hash, 'hex');
insert into refresh_token_families (id, access_key_id, created_at)
  select family_id, access_key_id, created_at from refresh_tokens;
alter table refresh_tokens
  alter column family_id set not null,
  add foreign key (family_id) references refresh_token_families (id);
create index refresh_tokens_family on refresh_tokens (family_id);

-- Credential ids whose access tokens are refused although their signature verifies: an access
-- key (`sub` of machine tokens, `azp` of the user tokens it obtained), a deleted user (`sub` of
-- user tokens) or a refresh-token chain (`sid` of machine tokens). Each replica reads its
-- tenants' rows every TOKEN_REVOCATION_CHECK_MS. A row is needed only while tokens issued before
-- it can still be alive: one day, the longest ACCESS_TOKEN_TTL_SECONDS allows.
create table token_revocations (
  tenant_id  text not null references tenants (id),
  subject    text not null,
  reason     text not null check (reason in ('access_key_revoked', 'user_deleted', 'refresh_token_reuse')),
  revoked_at timestamptz not null default now(),
  expires_at timestamptz not null default now() + interval '1 day',
  primary key (tenant_id, subject)
);
create index token_revocations_expiry on token_revocations (expires_at);

-- Not forced: the authenticator and the expiry job, running as the owning role, read and remove
-- every tenant's rows; a request transaction (as platform_tenant) that deletes a user writes its
-- tenant's only.
alter table token_revocations enable row level security;
create policy tenant_isolation on token_revocations
  using (tenant_id = current_setting('app.tenant_id', true))
  with check (tenant_id = current_setting('app.tenant_id', true));
grant select, insert on token_revocations to platform_tenant;
