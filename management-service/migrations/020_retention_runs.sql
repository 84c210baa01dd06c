-- The nightly retention job (docs/adr/0061-retention.md): one row per UTC day it completed, with the
-- rows each rule removed. The replica that runs it holds an advisory lock and writes the row in the
-- transaction that spans the run, so a second replica (or a restart) finds the day done. A run cut
-- off half-way writes no row and is run again; every batch it removed stays removed.
create table retention_runs (
  day         date primary key,
  started_at  timestamptz not null,
  finished_at timestamptz not null,
  deleted     jsonb not null check (jsonb_typeof(deleted) = 'object')
);
