-- A reference file: the vendor's data, the same for every tenant, built by the ingest command or
-- the sample generator and attached read-only by every replica. A new file replaces it whole.

create table reference_meta (
  version     varchar not null,
  created_at  timestamptz not null,
  source      varchar not null
);

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
  close double not null
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

-- Named universes of the vendor (GLOBAL, DEFAULT, ROBO), visible to every tenant.
create table universes (
  universe_name varchar not null,
  isin          varchar not null,
  primary key (universe_name, isin)
);
