-- Rate limits of both services (docs/adr/0023-rate-limits.md).
--
-- rate_limits holds the counters of the rate-limiter-flexible Postgres store, in the shape that
-- store reads and writes (it does not create the table here: the services start it with
-- tableCreated). One row per counter: a credential's requests in the current window
-- (`rl:ak:<tenant>:<access key>`, `rl:api:…`, `rl:u:…`), a client address's requests on the token
-- endpoints (`rl:addr:…`), consecutive failed logins and their blocks (`login-fail:…`,
-- `login-block:…`). `expire` is the end of the row's window in epoch milliseconds.
create table rate_limits (
  key    varchar(255) primary key,
  points integer not null default 0,
  expire bigint
);
-- The store deletes rows that expired an hour ago every five minutes.
create index rate_limits_expire on rate_limits (expire);

-- Counters of addresses belong to no tenant, so there is no tenant_isolation policy: the tenant
-- role gets no grant, and row-level security refuses it every row; the services, as the owning
-- role, count.
alter table rate_limits enable row level security;

-- A tenant's own limits, set with `npm run cli -- tenant set-limits`; a missing value means the
-- service's default (RATE_LIMIT_* settings).
alter table tenants add column rate_limits jsonb not null default '{}'::jsonb
  check (jsonb_typeof(rate_limits) = 'object');
