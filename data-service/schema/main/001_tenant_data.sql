-- The replica's own database: what tenants write through the data interface. Reference data
-- (instruments, prices, factor metrics, built-in universes) lives in a separate reference file that
-- is attached read-only and can be replaced while the service runs (schema/reference/).

create table universes (
  tenant_id     varchar not null,
  universe_name varchar not null,
  isin          varchar not null,
  primary key (tenant_id, universe_name, isin)
);

create table custom_reference (
  tenant_id varchar not null,
  isin      varchar not null,
  key       varchar not null,
  value     json,
  primary key (tenant_id, isin, key)
);

create table inspirations (
  tenant_id   varchar not null,
  id          varchar not null,
  name        varchar not null,
  description varchar not null,
  type        varchar not null,
  xray_query  varchar not null,
  primary key (tenant_id, id)
);
