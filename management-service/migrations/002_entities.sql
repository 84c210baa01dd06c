-- Versioned entities of every type (users, portfolios, goals, …) in one store. `entities` holds the
-- current state; `entity_versions` the immutable history. Both change only together, in one
-- transaction: every create, PATCH and DELETE appends a version and moves the current state to it.
--
-- Tenant isolation twice over: every query names the tenant, and row-level security lets the
-- `platform_tenant` role (which request transactions switch to) see only the rows of the tenant in
-- the transaction-local setting `app.tenant_id`; without that setting it sees nothing.

create table entities (
  tenant_id         text not null references tenants (id),
  id                text not null,
  type              text not null,
  parent_id         text,
  version           integer not null check (version >= 1),
  doc               jsonb not null,
  external_id       text generated always as (doc ->> 'external_id') stored,
  deleted           boolean not null default false,
  readable_by       text[] not null default '{}',
  modifiable_by     text[] not null default '{}',
  created_at        timestamptz not null,
  version_at        timestamptz not null,
  version_author_id text,
  primary key (tenant_id, id)
);
create unique index entities_external_id on entities (tenant_id, type, external_id) where external_id is not null;
create unique index entities_user_email on entities (tenant_id, (doc ->> 'email')) where type = 'users' and doc ->> 'email' is not null;
create unique index entities_user_phone on entities (tenant_id, (doc ->> 'phone')) where type = 'users' and doc ->> 'phone' is not null;
create index entities_parent on entities (tenant_id, parent_id) where parent_id is not null;

create table entity_versions (
  tenant_id         text not null,
  id                text not null,
  version           integer not null,
  doc               jsonb not null,
  deleted           boolean not null,
  version_at        timestamptz not null,
  version_author_id text,
  primary key (tenant_id, id, version),
  foreign key (tenant_id, id) references entities (tenant_id, id)
);

do $$
begin
  create role platform_tenant nologin;
exception when duplicate_object then null;
end $$;
grant platform_tenant to current_user;
grant usage on schema public to platform_tenant;
grant select, insert, update on entities, entity_versions to platform_tenant;
grant select on tenants to platform_tenant;

alter table entities enable row level security;
alter table entities force row level security;
create policy tenant_isolation on entities
  using (tenant_id = current_setting('app.tenant_id', true))
  with check (tenant_id = current_setting('app.tenant_id', true));

alter table entity_versions enable row level security;
alter table entity_versions force row level security;
create policy tenant_isolation on entity_versions
  using (tenant_id = current_setting('app.tenant_id', true))
  with check (tenant_id = current_setting('app.tenant_id', true));

