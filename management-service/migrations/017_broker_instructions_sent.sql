-- When an instruction was first handed to the broker (docs/adr/0022-execution-and-withdrawals.md).
-- Set and committed before the broker is called: until then a payout may still be resized to the
-- divest_amount in force, or dropped, and orders are checked against the cash; from then on it is
-- sent again only as it was, since the broker may have executed it.
alter table broker_instructions add column sent_at timestamptz;
-- Instructions still open now may have been handed to the broker already (nothing recorded it):
-- they count as sent, and go again as they are.
update broker_instructions set sent_at = created_at where settled_at is null;
