-- The tenant tables become this replica's cache of the tenant data in Postgres (the management
-- database's data_* tables, migration 007), reloaded per tenant when its version changes
-- (src/tenant-data/). Rows written before lived only here; they are dropped, and every tenant's
-- rows are loaded from Postgres on its first request.
--
-- No primary keys: Postgres keeps the rows unique, and DuckDB's index makes the bulk changes of a
-- cache slow (deleting a tenant's 300,000 values and inserting them again in one transaction took
-- 17 s with the key, 0.7 s without; updating them 13 s).

drop table universes;
drop table custom_reference;
drop table inspirations;

create table universes (
  tenant_id     varchar not null,
  universe_name varchar not null,
  isin          varchar not null
);

create table custom_reference (
  tenant_id varchar not null,
  isin      varchar not null,
  key       varchar not null,
  value     json
);

create table inspirations (
  tenant_id   varchar not null,
  id          varchar not null,
  name        varchar not null,
  description varchar not null,
  type        varchar not null,
  xray_query  varchar not null
);
