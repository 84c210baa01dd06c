/**
 * One line of `npm run events:tail` for a tenant event as it arrives on the bus: what a person
 * watching needs to tell events apart (contracts/events.asyncapi.yaml), as JSON so that tools can
 * read the lines too. A body that is not an event is shown as it came rather than dropped.
 */
export function eventLine(body: string): string {
  let event: unknown;
  try {
    event = JSON.parse(body);
  } catch {
    return JSON.stringify({ unreadable: body });
  }
  if (!isObject(event)) return JSON.stringify({ unreadable: body });
  const data = isObject(event.data) ? event.data : {};
  // Every event names its entity in data.id but the assessments', which name the profile assessed.
  const entity = data.id ?? data.profile_id ?? null;
  return JSON.stringify({
    subject: event.subject ?? null,
    action: event.action ?? null,
    entity_id: entity,
    created: event.created ?? null,
    id: event.id ?? null,
  });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
