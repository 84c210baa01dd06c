-- Typed access to document fields for the collection query language (decisions §8), and the
-- indexes behind its common queries. The compiler (src/query/compile.ts) writes exactly these
-- expressions, so the planner can match them to the indexes.

-- A number, also when stored as a numeric string ("amounts are often stored as strings").
create function platform_numeric(value jsonb) returns numeric
language sql immutable parallel safe as $$
  select case jsonb_typeof(value)
    when 'number' then (value #>> '{}')::numeric
    when 'string' then case when (value #>> '{}') ~ '^\s*-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?\s*$' then (value #>> '{}')::numeric end
  end
$$;

create function platform_boolean(value jsonb) returns boolean
language sql immutable parallel safe as $$
  select case jsonb_typeof(value) when 'boolean' then (value #>> '{}')::boolean end
$$;

-- Stored times are RFC 3339 with an offset, so the cast does not depend on the session time zone.
create function platform_timestamptz(value text) returns timestamptz
language plpgsql immutable parallel safe as $$
begin
  return value::timestamptz;
exception when others then
  return null;
end
$$;

create index entities_type_id on entities (tenant_id, type, id);
create index entities_readable_by on entities using gin (readable_by);
create index entities_portfolio_owner on entities (tenant_id, (doc ->> 'owned_by_user_id')) where type = 'portfolios';
create index entities_portfolio_profile on entities (tenant_id, (doc -> 'config' -> 'manager_settings' ->> 'suitability_profile_id'))
  where type = 'portfolios' and doc -> 'config' -> 'manager_settings' ->> 'suitability_profile_id' is not null;
-- Pending withdrawals: only portfolios with a divest_amount are in this index.
create index entities_portfolio_divest on entities (tenant_id, platform_numeric(doc -> 'config' -> 'manager_settings' -> 'divest_amount'))
  where type = 'portfolios' and platform_numeric(doc -> 'config' -> 'manager_settings' -> 'divest_amount') is not null;

grant execute on function platform_numeric(jsonb), platform_boolean(jsonb), platform_timestamptz(text) to platform_tenant;
