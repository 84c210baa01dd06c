import assert from 'node:assert/strict';
import { eventLine } from '../lib/event-line.ts';

/** A tenant event as the relay publishes it (contracts/events.asyncapi.yaml), with `data` and fields replaced as given. */
const event = (fields: Record<string, unknown> = {}, data: Record<string, unknown> = { id: 'P01JP9ZMQCN0XG3YNRRKJ6T0FZ3', external_id: null }) =>
  JSON.stringify({
    id: '01JP9ZTDE0C3BFCH44DAMFZEK2',
    created: '2026-11-27T23:00:00.123Z',
    version: '1.0.0',
    subject: 'portfolios',
    action: 'creation',
    data,
    ...fields,
  });

describe('events:tail lines', () => {
  it('names the subject, action, entity, creation time and event id of an event, on one line of JSON', () => {
    const line = eventLine(event());
    assert.equal(line.includes('\n'), false);
    assert.deepEqual(JSON.parse(line), {
      subject: 'portfolios',
      action: 'creation',
      entity_id: 'P01JP9ZMQCN0XG3YNRRKJ6T0FZ3',
      created: '2026-11-27T23:00:00.123Z',
      id: '01JP9ZTDE0C3BFCH44DAMFZEK2',
    });
  });

  it("takes an assessment's profile as its entity, which names no data.id", () => {
    const line = eventLine(event({ subject: 'assessments', action: 'status_update' }, { profile_id: 'N01JP9ZMTADQPJJDNNFKF076MYC', value: 'COMPLETE' }));
    assert.equal(JSON.parse(line).entity_id, 'N01JP9ZMTADQPJJDNNFKF076MYC');
  });

  it('shows missing fields as null rather than leaving them out', () => {
    assert.deepEqual(JSON.parse(eventLine(JSON.stringify({ subject: 'portfolios' }))), {
      subject: 'portfolios',
      action: null,
      entity_id: null,
      created: null,
      id: null,
    });
  });

  it('shows a body that is not an event object as it came', () => {
    for (const body of ['not json', '[1,2]', 'null', '"text"']) assert.deepEqual(JSON.parse(eventLine(body)), { unreadable: body }, body);
  });
});
