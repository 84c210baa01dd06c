-- The expiry job's scan (docs/adr/0027-assessments.md): the earliest expires_datetime of a suitability
-- profile's ACCEPTED assessments, indexed per tenant for the profiles that have one, so a round reads
-- only the profiles that are due instead of every profile of every tenant. The times are compared as
-- text: the service writes them in one form (UTC, milliseconds, `Z`), whose text order is time order.
create function assessment_next_expiry(doc jsonb) returns text
  language sql immutable parallel safe
  as $$
    select min(a ->> 'expires_datetime')
      from jsonb_array_elements(case when jsonb_typeof(doc -> 'assessments') = 'array' then doc -> 'assessments' else '[]'::jsonb end) a
     where a ->> 'status' = 'ACCEPTED'
  $$;

create index entities_assessment_expiry on entities (tenant_id, assessment_next_expiry(doc))
  where type = 'suitability-profiles' and not deleted and assessment_next_expiry(doc) is not null;
