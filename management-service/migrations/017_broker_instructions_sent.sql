-- When an instruction was first handed to the broker (docs/adr/0022-execution-and-withdrawals.md).
-- Set and committed before the broker is called: until then a payout may still be resized to the
-- divest_amount in force, or dropped; from then on it is sent again only as it was, since the broker
-- may have executed it. Rows written before are unsent and open ones are sized when first sent.
alter table broker_instructions add column sent_at timestamptz;
