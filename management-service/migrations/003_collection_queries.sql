-- Typed access to document fields for the collection query language (docs/adr/0011-query-language.md), and the
-- indexes behind its common queries. The compiler (src/query/compile.ts) writes exactly these
-- expressions, so the planner can match them to the indexes.
--
-- Row-level security lets the planner use a condition in an index scan (before the policy
-- filters rows) only when every function in it is LEAKPROOF. jsonb's own operators are not, so
-- the compiler reads documents only through these functions, which never raise an error and are
-- marked LEAKPROOF when the migrating user may do so (a superuser). Without that mark queries still
-- run, but those on document fields scan the tenant's rows instead of an index.

create function platform_text(doc jsonb, path text[]) returns text
language plpgsql immutable strict parallel safe as $$
begin
  return doc #>> path;
end
$$;

-- A number, also when stored as a numeric string ("amounts are often stored as strings").
create function platform_numeric(doc jsonb, path text[]) returns numeric
language plpgsql immutable strict parallel safe as $$
declare
  value jsonb := doc #> path;
begin
  if jsonb_typeof(value) = 'number' or (jsonb_typeof(value) = 'string' and (value #>> '{}') ~ '^\s*-?[0-9]{1,40}(\.[0-9]{1,40})?([eE][-+]?[0-9]{1,4})?\s*$') then
    return (value #>> '{}')::numeric;
  end if;
  return null;
exception when others then
  return null;
end
$$;

-- The same for scans, where no index is involved: plain SQL, which the planner inlines.
create function platform_number(value jsonb) returns numeric
language sql immutable parallel safe as $$
  select case jsonb_typeof(value)
    when 'number' then (value #>> '{}')::numeric
    when 'string' then case when (value #>> '{}') ~ '^\s*-?[0-9]{1,40}(\.[0-9]{1,40})?([eE][-+]?[0-9]{1,4})?\s*$' then (value #>> '{}')::numeric end
  end
$$;

-- Stored times are RFC 3339 with an offset, so the cast does not depend on the session time zone.
create function platform_timestamptz(doc jsonb, path text[]) returns timestamptz
language plpgsql immutable strict parallel safe as $$
begin
  return (doc #>> path)::timestamptz;
exception when others then
  return null;
end
$$;

do $$
begin
  if (select rolsuper from pg_roles where rolname = current_user) then
    alter function platform_text(jsonb, text[]) leakproof;
    alter function platform_numeric(jsonb, text[]) leakproof;
    alter function platform_timestamptz(jsonb, text[]) leakproof;
  end if;
end
$$;

grant execute on function platform_text(jsonb, text[]), platform_numeric(jsonb, text[]), platform_number(jsonb),
  platform_timestamptz(jsonb, text[]) to platform_tenant;

create index entities_type_id on entities (tenant_id, type, id);
create index entities_readable_by on entities using gin (readable_by);
create index entities_portfolio_owner on entities (tenant_id, platform_text(doc, '{owned_by_user_id}')) where type = 'portfolios';
create index entities_portfolio_profile on entities (tenant_id, platform_text(doc, '{config,manager_settings,suitability_profile_id}'))
  where type = 'portfolios' and platform_text(doc, '{config,manager_settings,suitability_profile_id}') is not null;
-- Pending withdrawals: only portfolios with a divest_amount are in this index.
create index entities_portfolio_divest on entities (tenant_id, platform_numeric(doc, '{config,manager_settings,divest_amount}'))
  where type = 'portfolios' and platform_numeric(doc, '{config,manager_settings,divest_amount}') is not null;

-- The planner keeps no statistics for the expressions of partial indexes: without these it guesses
-- 0.5% of the rows per owner and, for `orderby … limit 20`, walks the whole table in id order.
create statistics entities_owner_stats on (platform_text(doc, '{owned_by_user_id}')) from entities;
create statistics entities_profile_stats on (platform_text(doc, '{config,manager_settings,suitability_profile_id}')) from entities;
create statistics entities_divest_stats on (platform_numeric(doc, '{config,manager_settings,divest_amount}')) from entities;
