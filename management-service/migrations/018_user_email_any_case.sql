-- A user's e-mail address is unique per tenant whatever its case (docs/adr/0040-identifiers-as-people-read-them.md):
-- once `eve.S@ex.com` is taken, `Eve.S@EX.com` is a 409. The address stays stored as the client sent it.
--
-- Users that already differ only by the case of their address cannot all be in a unique index. The
-- oldest of each such group keeps its place in the index; the younger ones are left as they are,
-- outside it (named in the index's condition and in a warning of this migration), so the migration
-- never fails on them and no user is changed. Any new address that matches the group in some case is
-- still refused, as it collides with the oldest.

-- FORCE row-level security would hide every row from this read (no tenant is set here); the
-- table's owner lifts it for this transaction only.
alter table entities no force row level security;

do $$
declare
  younger text[];
begin
  select array_agg(id order by id) into younger from (
    select id, row_number() over (partition by tenant_id, lower(doc ->> 'email') order by created_at, id) as n
      from entities
     where type = 'users' and doc ->> 'email' is not null
  ) ranked
   where n > 1;
  if younger is null then
    create unique index entities_user_email_any_case on entities (tenant_id, lower(doc ->> 'email'))
      where type = 'users' and doc ->> 'email' is not null;
  else
    raise warning 'users whose e-mail address differs only by case from an older user''s, left outside entities_user_email_any_case: %',
      array_to_string(younger, ', ');
    execute format(
      'create unique index entities_user_email_any_case on entities (tenant_id, lower(doc ->> %L)) where type = %L and doc ->> %L is not null and id <> all (%L::text[])',
      'email', 'users', 'email', younger);
  end if;
end
$$;

alter table entities force row level security;

drop index entities_user_email;
