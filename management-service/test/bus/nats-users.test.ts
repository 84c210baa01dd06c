import assert from 'node:assert/strict';
import { busAccounts, renderNatsAccounts, servicePermissions, tenantAccount, tenantPermissions, type NatsAccount } from '../../src/bus/nats-users.ts';

// docs/adr/0026-bus-authorization.md: what the rendered accounts and users grant, without I/O.
const HASH = '$2b$04$rkBVS35tJvCHC1uGOKZZS.RAyaqNYS0.d3bg8JyOn.SgfUVV/QZUe';
const SERVICES = { management: HASH, data: HASH };
const credential = (id: string, tenant: string) => ({ id, tenant_id: tenant, password_hash: HASH });

describe('NATS accounts and users rendered from the bus credentials', () => {
  it("lets a tenant subscribe to its own subjects and its account's MQTT deliveries only, and publish nothing", () => {
    assert.deepEqual(tenantPermissions('acme'), {
      publish: { deny: ['>'] },
      subscribe: { allow: ['tenants.acme', 'tenants.acme.>', '$MQTT.sub.>'] },
    });
  });

  it("gives each service its own subjects and no other's", () => {
    const management = servicePermissions('management');
    const data = servicePermissions('data');
    assert.ok(management.publish.allow!.includes('tenants.*.events') && management.publish.allow!.includes('platform.optimizer.requests.*'));
    assert.ok(!management.publish.allow!.includes('platform.optimizer.results'), 'results come from the data service');
    assert.ok(data.publish.allow!.includes('platform.optimizer.results'));
    assert.ok(
      data.publish.allow!.filter((s) => s.includes('CONSUMER.CREATE')).every((s) => s.endsWith('.platform.optimizer.requests.*')),
      'the optimizer creates consumers of the requests only',
    );
    assert.ok(
      data.publish.deny!.some((s) => s.includes('MSG.NEXT') && s.endsWith('.management-optimizer-results')),
      "nor pulls the management service's results",
    );
    assert.ok(!data.publish.allow!.some((s) => s.startsWith('tenants.')), 'the data service publishes no tenant event');
    assert.ok(!data.publish.allow!.some((s) => s.includes('TENANT_EVENTS.') && s.includes('CONSUMER')), "nor reads the tenants' stream");
    // Histories: the management service asks, the data service takes every tenant's requests and may only answer them.
    assert.ok(management.publish.allow!.includes('services.history.*') && !data.publish.allow!.some((s) => s.startsWith('services.')));
    assert.deepEqual(management.subscribe, { allow: ['_INBOX.>'] });
    assert.deepEqual(data.subscribe, { allow: ['_INBOX.>', 'services.history.*'] });
    assert.deepEqual(data.allowResponses, { max: 1 });
    assert.equal(management.allowResponses, undefined);
    for (const p of [management, data]) {
      assert.ok(!p.publish.allow!.some((s) => s === '>' || s === '$JS.API.>' || s.includes('DELETE') || s.includes('PURGE')), 'no wildcard admin API');
    }
  });

  it("puts the services and the admin in the platform's account and each tenant's credentials in the tenant's own", () => {
    const accounts = busAccounts({
      services: SERVICES,
      admin: HASH,
      credentials: [credential('B01', 'beta'), credential('A01', 'acme'), credential('A02', 'acme')],
    });
    assert.deepEqual(
      accounts.map((a) => [a.name, a.users.map((u) => u.user)]),
      [
        ['PLATFORM', ['management-service', 'data-service', 'admin']],
        ['TENANT_acme', ['A01', 'A02']],
        ['TENANT_beta', ['B01']],
      ],
    );
    const [platform, acme] = accounts as [NatsAccount, NatsAccount];
    assert.equal(platform.users[2]!.permissions, undefined, 'the admin has no limits in its account');
    assert.deepEqual(acme.users[0]!.permissions, tenantPermissions('acme'));
    // Events cross accounts only as each tenant's own subject, exported to that tenant's account alone.
    assert.deepEqual(platform.exports, [
      { stream: 'tenants.acme.events', accounts: [tenantAccount('acme')] },
      { stream: 'tenants.beta.events', accounts: [tenantAccount('beta')] },
    ]);
    assert.deepEqual(acme.imports, [{ account: 'PLATFORM', stream: 'tenants.acme.events' }]);
    assert.deepEqual(acme.exports, []);
  });

  it('gives a tenant without a working credential no account, and a server without an admin none', () => {
    const accounts = busAccounts({ services: SERVICES, credentials: [] });
    assert.deepEqual(
      accounts.map((a) => [a.name, a.users.map((u) => u.user), a.exports]),
      [['PLATFORM', ['management-service', 'data-service'], []]],
    );
  });

  it('renders an accounts block: JetStream in every account, one line per user, export and import', () => {
    const text = renderNatsAccounts(busAccounts({ services: SERVICES, admin: HASH, credentials: [credential('A01', 'acme')] }));
    assert.match(text, /^accounts \{$/m);
    assert.equal(text.match(/^ {4}jetstream: enabled$/gm)?.length, 2);
    assert.deepEqual(
      [...text.matchAll(/^ {2}"([^"]+)" \{$/gm)].map((m) => m[1]),
      ['PLATFORM', 'TENANT_acme'],
    );
    assert.ok(text.includes('{ stream: "tenants.acme.events", accounts: ["TENANT_acme"] }'));
    assert.ok(text.includes('{ stream: { account: "PLATFORM", subject: "tenants.acme.events" } }'));
    const acmeUser = text.split('\n').find((l) => l.includes('user: "A01"'))!;
    assert.ok(acmeUser.includes('subscribe: { allow: ["tenants.acme", "tenants.acme.>", "$MQTT.sub.>"] }'));
    assert.ok(!acmeUser.includes('allow_responses'), 'a tenant answers nothing');
    const dataUser = text.split('\n').find((l) => l.includes('"data-service"'))!;
    assert.ok(dataUser.endsWith(', allow_responses: { max: 1 } } }'), dataUser);
    assert.ok(text.indexOf('user: "A01"') > text.indexOf('"TENANT_acme" {'), "the credential is inside its tenant's account");
  });

  it('refuses what could change the structure of the file: a name, hash, subject or tenant id that is not plain', () => {
    const account = (over: Partial<NatsAccount>): NatsAccount => ({ name: 'A', users: [], exports: [], imports: [], ...over });
    const one =
      (user: string, passwordHash = HASH) =>
      () =>
        renderNatsAccounts([account({ users: [{ user, passwordHash }] })]);
    assert.throws(one('a" } ] authorization { users = [ {user: "x'), /not plain/);
    assert.throws(one('a b'), /not plain/);
    assert.throws(one('ok', 'plain-password'), /not a bcrypt hash/);
    assert.throws(one('ok', `${HASH}" }`), /not a bcrypt hash/);
    assert.throws(() => renderNatsAccounts([account({ name: 'A" { users' })]), /not plain/);
    assert.throws(() => renderNatsAccounts([account({ exports: [{ stream: 'a.>', accounts: ['B'] }] })]), /not plain tokens/);
    assert.throws(() => renderNatsAccounts([account({ exports: [{ stream: 'a.b', accounts: ['B"]'] }] })]), /not plain/);
    assert.throws(() => renderNatsAccounts([account({ imports: [{ account: 'B', stream: 'a.*' }] })]), /not plain tokens/);
    assert.throws(() => busAccounts({ services: SERVICES, credentials: [credential('X', 'acme.>')] }), /not a tenant id/);
  });

  it('refuses a user twice, also in two accounts, and an account twice', () => {
    const user = { user: 'x', passwordHash: HASH };
    const account = (name: string): NatsAccount => ({ name, users: [user], exports: [], imports: [] });
    assert.throws(() => renderNatsAccounts([{ ...account('A'), users: [user, user] }]), /twice/);
    assert.throws(() => renderNatsAccounts([account('A'), account('B')]), /twice/);
    assert.throws(
      () =>
        renderNatsAccounts([
          { ...account('A'), users: [] },
          { ...account('A'), users: [] },
        ]),
      /account A appears twice/,
    );
  });
});
