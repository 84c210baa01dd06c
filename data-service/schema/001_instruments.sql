-- Instrument store of the data service. Shared reference data (instruments, prices, factor
-- metrics) is the same for every tenant; universes, custom reference data and inspiration
-- definitions are per tenant ('*' marks the built-in ones every tenant sees).

create table instruments (
  isin                 varchar primary key,
  name                 varchar not null,
  ticker               varchar,
  asset_class          varchar,
  asset_subclass       varchar,
  instrument_type      varchar,
  currency             varchar,
  country              varchar,
  region               varchar,
  sector               varchar,
  exchange             varchar,
  market_cap           double,
  size_label           varchar,
  price                decimal(20, 6),
  price_date           date,
  dividend_yield       double,
  ter                  double,
  analyst_target_price decimal(20, 6)
);

create table prices (
  isin  varchar not null,
  date  date not null,
  close double not null,
  primary key (isin, date)
);

create table factor_metrics (
  isin             varchar primary key,
  value            double,
  growth           double,
  momentum         double,
  stability        double,
  financial_health double,
  profitability    double,
  size             double,
  dividend         double
);

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
