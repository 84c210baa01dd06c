-- Daily exchange rates as the ECB publishes them: units of `currency` per 1 EUR, exact decimals.
-- They belong to the reference file like prices, so a new file replaces them whole and every
-- answer of one reference version converts with the same rates (docs/adr/0057-fx-rates.md).
create table fx_rates (
  currency varchar not null,
  date     date not null,
  rate     decimal(20, 10) not null,
  primary key (currency, date)
);
