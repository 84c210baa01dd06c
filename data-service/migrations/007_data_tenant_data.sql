-- Tenant data of the data service, which owns these tables (the management service never reads or
-- writes them; one migrate command applies every owner's files to the one database). What tenants
-- write through the data interface, and their universes (CLI: `data universe set`), is kept here so
-- that every data-service replica serves the same data and a new replica starts with it. Each
-- replica caches a tenant's rows in its DuckDB file and reloads them when the tenant's version
-- differs from the one it loaded. Isolation: every statement names the tenant (no row-level
-- security: the data service does not run as `platform_tenant`).

-- Custom reference values (docs/adr/0016-tenant-data-in-postgres.md): one per instrument and key; a JSON null is stored as
-- 'null'::jsonb, a value like any other.
create table data_custom_reference (
  tenant_id text  not null references tenants (id),
  isin      text  not null,
  key       text  not null,
  value     jsonb not null,
  primary key (tenant_id, isin, key)
);

-- A tenant's own inspiration definitions (the platform's are in code).
create table data_inspirations (
  tenant_id   text not null references tenants (id),
  id          text not null,
  name        text not null,
  description text not null,
  type        text not null,
  xray_query  text not null,
  primary key (tenant_id, id)
);

-- A tenant's own universes: a universe exists while it has members.
create table data_universes (
  tenant_id     text not null references tenants (id),
  universe_name text not null,
  isin          text not null,
  primary key (tenant_id, universe_name, isin)
);

-- Bumped by every transaction that changes a tenant's rows above (its row lock also serialises the
-- tenant's writers). No row: the tenant has no data.
create table data_tenant_versions (
  tenant_id text   primary key references tenants (id),
  version   bigint not null check (version > 0)
);
