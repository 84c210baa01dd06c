-- The ledger of erased users (docs/adr/0059-personal-data-erasure.md): ids only, never personal data.
-- It tells a replayed erasure from a first one, is what an operator re-applies after restoring a
-- backup taken before an erasure, and dates the end of the retention of the user's records.
create table user_erasures (
  tenant_id text not null references tenants (id),
  user_id   text not null,
  erased_at timestamptz not null,
  primary key (tenant_id, user_id)
);

alter table user_erasures enable row level security;
alter table user_erasures force row level security;
create policy tenant_isolation on user_erasures
  using (tenant_id = current_setting('app.tenant_id', true))
  with check (tenant_id = current_setting('app.tenant_id', true));
grant select, insert on user_erasures to platform_tenant;
