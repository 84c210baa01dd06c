-- The W3C traceparent of the request or message whose transaction wrote the row: the relay sends it
-- on as the `traceparent` header of the NATS message (docs/adr/0024-observability.md). Null for
-- rows written outside a trace (jobs) and for rows written before this column.
alter table outbox add column traceparent text;
