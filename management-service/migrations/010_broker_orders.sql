-- Broker instructions of several kinds (docs/adr/0022-execution-and-withdrawals.md): DEPOSIT (cash
-- house account → subaccount, as in 006), ORDERS (an optimization's orders, booked as ORDER
-- transactions when filled) and WITHDRAWAL (cash subaccount → house account). Rows written before
-- keep working: they are DEPOSITs with their amount and PENDING transaction.
alter table broker_instructions drop constraint broker_instructions_kind_check;
alter table broker_instructions add constraint broker_instructions_kind_check check (kind in ('DEPOSIT', 'ORDERS', 'WITHDRAWAL'));

-- ORDERS carry no single amount or transaction: the fills become one ORDER transaction per ISIN. A
-- WITHDRAWAL has a PENDING transaction when a customer asked for it, none when the service freed a
-- robo-advised portfolio's divest_amount (its transaction is written when settled).
alter table broker_instructions alter column transaction_id drop not null;
alter table broker_instructions alter column amount drop not null;
alter table broker_instructions add column optimization_id text;
-- The orders as sent to the broker: [{isin, shares, price, cost}] with decimal strings.
alter table broker_instructions add column orders jsonb;
-- The broker's answer once settled (its references, fills or reason), kept for reconciliation.
alter table broker_instructions add column result jsonb;

alter table broker_instructions add constraint broker_instructions_kind_fields check (
  case kind
    when 'ORDERS' then optimization_id is not null and orders is not null and amount is null and transaction_id is null
    when 'WITHDRAWAL' then amount is not null and optimization_id is null and orders is null
    else transaction_id is not null and amount is not null and optimization_id is null and orders is null
  end
);

-- One cash move out of a portfolio at a time: its amount is checked against the cash when queued.
create unique index broker_instructions_one_withdrawal on broker_instructions (tenant_id, portfolio_id)
  where kind = 'WITHDRAWAL' and settled_at is null;
-- One execution per optimization, however often it is queued.
create unique index broker_instructions_one_execution on broker_instructions (tenant_id, optimization_id)
  where kind = 'ORDERS';
-- The open instructions of a portfolio (is a withdrawal or an execution in flight?).
create index broker_instructions_open on broker_instructions (tenant_id, portfolio_id) where settled_at is null;
