-- A tenant's own message bus, to which its events are forwarded (decisions §9): an MQTT broker
-- (QoS 1) for now. Configured by the platform team with the CLI.
create table event_destinations (
  tenant_id  text primary key references tenants (id),
  kind       text not null check (kind in ('mqtt')),
  url        text not null,
  topic      text not null,
  updated_at timestamptz not null default now()
);
