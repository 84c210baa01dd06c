import assert from 'node:assert/strict';
import { busUsers, renderNatsUsers, servicePermissions, tenantPermissions } from '../../src/bus/nats-users.ts';

// docs/adr/0026-bus-authorization.md: what the rendered users file grants, without I/O.
const HASH = '$2b$04$rkBVS35tJvCHC1uGOKZZS.RAyaqNYS0.d3bg8JyOn.SgfUVV/QZUe';

describe('NATS users rendered from the bus credentials', () => {
  it("lets a tenant subscribe to its own subjects only (the MQTT '#' parent included) and publish nothing", () => {
    assert.deepEqual(tenantPermissions('acme'), { publish: { deny: ['>'] }, subscribe: { allow: ['tenants.acme', 'tenants.acme.>'] } });
  });

  it("gives each service its own subjects and no other's", () => {
    const management = servicePermissions('management');
    const data = servicePermissions('data');
    assert.ok(management.publish.allow!.includes('tenants.*.events') && management.publish.allow!.includes('platform.optimizer.requests'));
    assert.ok(!management.publish.allow!.includes('platform.optimizer.results'), 'results come from the data service');
    assert.ok(data.publish.allow!.includes('platform.optimizer.results'));
    assert.ok(!data.publish.allow!.some((s) => s.startsWith('tenants.')), 'the data service publishes no tenant event');
    assert.ok(!data.publish.allow!.some((s) => s.includes('TENANT_EVENTS.') && s.includes('CONSUMER')), "nor reads the tenants' stream");
    for (const p of [management, data]) {
      assert.deepEqual(p.subscribe, { allow: ['_INBOX.>'] });
      assert.ok(!p.publish.allow!.some((s) => s === '>' || s === '$JS.API.>' || s.includes('DELETE') || s.includes('PURGE')), 'no wildcard admin API');
    }
  });

  it('renders one line per user: services, the optional admin, then the credentials', () => {
    const text = renderNatsUsers(
      busUsers({
        services: { management: HASH, data: HASH },
        admin: HASH,
        credentials: [{ id: 'A01JZ0000000000000000000000', tenant_id: 'acme', password_hash: HASH }],
      }),
    );
    const lines = text.split('\n').filter((l) => l.startsWith('  {'));
    assert.deepEqual(
      lines.map((l) => /user: "([^"]+)"/.exec(l)![1]),
      ['management-service', 'data-service', 'admin', 'A01JZ0000000000000000000000'],
    );
    assert.ok(!lines[2]!.includes('permissions'), 'the admin has no limits');
    assert.ok(lines[3]!.includes('subscribe: { allow: ["tenants.acme", "tenants.acme.>"] }'));
    assert.match(text, /^users = \[$/m);
    assert.equal(renderNatsUsers(busUsers({ services: { management: HASH, data: HASH }, credentials: [] })).includes('"admin"'), false);
  });

  it('refuses what could change the structure of the file: a user name or hash that is not plain', () => {
    const one =
      (user: string, passwordHash = HASH) =>
      () =>
        renderNatsUsers([{ user, passwordHash }]);
    assert.throws(one('a" } ] authorization { users = [ {user: "x'), /not plain/);
    assert.throws(one('a b'), /not plain/);
    assert.throws(one('ok', 'plain-password'), /not a bcrypt hash/);
    assert.throws(one('ok', `${HASH}" }`), /not a bcrypt hash/);
    assert.throws(
      () =>
        renderNatsUsers([
          { user: 'x', passwordHash: HASH },
          { user: 'x', passwordHash: HASH },
        ]),
      /twice/,
    );
  });
});
