-- A tenant's own message bus, to which its events are forwarded (docs/adr/0012-outbound-events.md): an MQTT broker
-- (QoS 1, `topic`) or an AMQP 0-9-1 broker (`exchange` and `routing_key`, publisher confirms).
-- Configured by the platform team with the CLI.
create table event_destinations (
  tenant_id   text primary key references tenants (id),
  kind        text not null check (kind in ('mqtt', 'amqp')),
  url         text not null,
  topic       text,
  exchange    text,
  routing_key text,
  updated_at  timestamptz not null default now(),
  check ((kind = 'mqtt' and topic is not null) or (kind = 'amqp' and exchange is not null and routing_key is not null))
);
