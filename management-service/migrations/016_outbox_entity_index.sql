-- GET /events/?entity_id=: the events about one entity in the feed's order, without reading the
-- tenant's whole feed (docs/adr/0039-events-of-one-entity.md).
create index outbox_tenant_entity_order on outbox (tenant_id, entity_id, xid, seq);
