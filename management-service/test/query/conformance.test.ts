import assert from 'node:assert/strict';
import { assertProblem } from '@platform/test-support/http';
import { build, machineApi, type Api } from '@platform/test-support/fixtures';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';

/**
 * The query language of docs/adr/0011-query-language.md against a fixed set of portfolios: every accepted expression
 * with the portfolios it must return (in order: by id unless it sorts), every rejected one with the
 * position its 400 names. `{Alpha}` stands for that portfolio's id, `{ann}` for the owner's.
 */
const ALL = ['Alpha', 'Beta', 'Gamma', 'Delta', 'Epsilon', 'Zeta', "O'Neil's", 'Theta', 'Star*Fund'];
const without = (...names: string[]) => ALL.filter((n) => !names.includes(n));
const D = 'config.manager_settings.divest_amount';

const accepted: [string, string[]][] = [
  ['', ALL],
  ['   ', ALL],
  ["name eq 'Alpha'", ['Alpha']],
  ["name eq 'alpha'", []],
  ["name eq 'A*'", ['Alpha']],
  ["name eq '*a'", ['Alpha', 'Beta', 'Gamma', 'Delta', 'Zeta', 'Theta']],
  ["name eq '*et*'", ['Beta', 'Zeta', 'Theta']],
  ["name eq '*'", ALL],
  ["name eq 'Star\\*Fund'", ['Star*Fund']],
  ["name eq 'Star\\**'", ['Star*Fund']],
  ["name eq 'Star*'", ['Star*Fund']],
  ["name eq 'O''Neil''s'", ["O'Neil's"]],
  ["name eq '*''*'", ["O'Neil's"]],
  ["name neq 'Alpha'", without('Alpha')],
  ["name neq 'A*'", without('Alpha')],
  ["name eq '%'", []],
  ["name eq '_eta'", []],
  ["name in ['Alpha', 'Zeta']", ['Alpha', 'Zeta']],
  ["name in ['Alpha']", ['Alpha']],
  ["name gt 'X'", ['Zeta']],
  ["name lt 'C'", ['Alpha', 'Beta']],
  ["name ge 'Theta'", ['Zeta', 'Theta']],
  ["name le 'Beta'", ['Alpha', 'Beta']],
  ["name in ['A' to 'C']", ['Alpha', 'Beta']],
  ["external_id eq 'ext-1'", ['Alpha']],
  ['external_id eq null', without('Alpha', 'Beta')],
  ['external_id neq null', ['Alpha', 'Beta']],
  ["external_id neq 'ext-1'", without('Alpha')],
  ["external_id eq 'ext-*'", ['Alpha', 'Beta']],
  ["external_id in ['ext-2', 'nope']", ['Beta']],
  ["base_currency in ['USD', 'CHF']", ['Beta', 'Epsilon']],
  ["base_currency eq 'EUR' and config.manager eq 'USER_MANAGED'", ['Alpha', 'Star*Fund']],
  ["config.manager eq 'ROBO_ADVISOR_ADVISORY'", ['Delta', 'Epsilon']],
  [`${D} neq 0 and ${D} neq null`, ['Delta', 'Epsilon', 'Theta']],
  // neq next to a term that holds a value there compiles to a plain <> (docs/adr/0028-pending-withdrawals-index.md): same answers.
  [`${D} neq null and ${D} neq 0`, ['Delta', 'Epsilon', 'Theta']],
  [`${D} neq 0.0 and ${D} neq null`, ['Delta', 'Epsilon', 'Theta']],
  [`${D} neq 100 and ${D} gt -1`, ['Gamma', 'Delta', 'Epsilon']],
  [`${D} neq 0 and ${D} neq null or name eq 'Alpha'`, ['Alpha', 'Delta', 'Epsilon', 'Theta']],
  [`(${D} neq 0 or name eq 'Alpha') and ${D} neq null`, ['Delta', 'Epsilon', 'Theta']],
  [`${D} neq 0 and (${D} neq null or name eq 'Alpha')`, ['Alpha', 'Delta', 'Epsilon', 'Theta']],
  [`${D} neq 0 and ${D} neq 100`, without('Gamma', 'Theta')],
  ["external_id neq 'ext-1' and external_id neq null", ['Beta']],
  [`${D} gt 100`, ['Delta', 'Epsilon']],
  [`${D} ge 100`, ['Delta', 'Epsilon', 'Theta']],
  [`${D} eq 100`, ['Theta']],
  [`${D} eq 100.0`, ['Theta']],
  [`${D} eq '100'`, ['Theta']],
  [`${D} lt 1`, ['Gamma']],
  [`${D} le 0`, ['Gamma']],
  [`${D} eq 0`, ['Gamma']],
  [`${D} eq -0`, ['Gamma']],
  [`${D} eq null`, ['Alpha', 'Beta', 'Zeta', "O'Neil's", 'Star*Fund']],
  [`${D} eq 1e100`, ['Epsilon']],
  [`${D} eq 1E+100`, ['Epsilon']],
  [`${D} eq '250.75'`, ['Delta']],
  [`${D} in [0, 250.75]`, ['Gamma', 'Delta']],
  [`${D} in [0 to 300]`, ['Gamma', 'Delta', 'Theta']],
  [`${D} in [100 to 100]`, ['Theta']],
  [`${D} neq 0`, without('Gamma')],
  [`${D} gt -1 and ${D} lt 1000`, ['Gamma', 'Delta', 'Theta']],
  ['config.manager_settings.start_amount eq 1000', ['Gamma']],
  ['config.manager_settings.start_amount neq null', ['Gamma']],
  ['funded_since eq null', without('Gamma', 'Delta')],
  ['funded_since neq null', ['Gamma', 'Delta']],
  ["funded_since gt '2021-12-31'", ['Delta']],
  ["funded_since gt '2021-12-31T23:59:59Z'", ['Delta']],
  ["funded_since in ['2021-01-01' to '2021-12-31']", ['Gamma']],
  ["funded_since in ['20210101' to '20211231']", ['Gamma']],
  ["funded_since in ['2021-06-15' to '2021-06-15']", ['Gamma']],
  ["funded_since in ['2021-06-15T00:00:00Z' to '2021-06-15T09:59:59Z']", []],
  ["funded_since in ['2021-06-15T11:00:00+01:00' to '2021-06-15T11:00:00+01:00']", ['Gamma']],
  ["funded_since in ['2021-06-15T10:00:00' to '2021-06-15T10:00:00.000Z']", ['Gamma']],
  ["funded_since in ['2021-06-15T12:00:00+0200' to '2022-01-01T00:00:00Z']", ['Gamma', 'Delta']],
  ["funded_since eq '2022-01-01T00:00:00Z'", ['Delta']],
  ["funded_since eq '2022-01-01T01:00:00+01:00'", ['Delta']],
  ["funded_since eq '2022-01-01'", ['Delta']],
  ["funded_since eq '20220101'", ['Delta']],
  ["funded_since lt '2022-01-01'", ['Gamma']],
  ["funded_since le '2022-01-01T00:00:00Z'", ['Gamma', 'Delta']],
  ["funded_since neq '2022-01-01T00:00:00Z'", without('Delta')],
  ["creation_datetime in ['2020-01-01' to '2100-01-01']", ALL],
  ["creation_datetime lt '2020-01-01'", []],
  ["creation_datetime gt '2020-01-01T00:00:00+14:00'", ALL],
  ['config.manager_settings.active eq false', ['Zeta']],
  ['config.manager_settings.active eq true', without('Zeta')],
  ['config.manager_settings.active neq true', ['Zeta']],
  ['archived eq true', ["O'Neil's"]],
  ['archived eq false', without("O'Neil's")],
  ['archived neq false', ["O'Neil's"]],
  ["status eq 'INACTIVE'", ['Zeta', "O'Neil's"]],
  ["status in ['ACTIVE']", ['Alpha', 'Beta', 'Gamma', 'Delta', 'Star*Fund']],
  ["status eq 'WAITING_FOR_POLICY'", ['Epsilon', 'Theta']],
  ["config.manager_settings.tags eq 'growth'", ['Alpha']],
  ["config.manager_settings.tags eq 'income'", ['Beta']],
  ["config.manager_settings.tags in ['esg', 'income']", ['Alpha', 'Beta']],
  ["config.manager_settings.tags neq 'growth'", without('Alpha')],
  // Every portfolio has tags, an empty list when none were given: none is null.
  ['config.manager_settings.tags eq null', []],
  ['config.manager_settings.tags neq null', ALL],
  ["money_type eq 'PAPER_MONEY'", ['Theta']],
  ['portfolio.$EUR gt 50', ['Alpha']],
  ['portfolio.$USD eq 2500.5', ['Beta']],
  ['portfolio.$USD neq null', ['Beta']],
  ['portfolio.IE00B4L5Y983 ge 1', ['Gamma']],
  ['brokerage_account eq null', without('Delta')],
  ['brokerage_account neq null', ['Delta']],
  ["brokerage_account.bank_account_type eq 'IBAN'", ['Delta']],
  ['deleted eq true', ['Kappa']],
  ['deleted eq false', ALL],
  ["deleted eq true or name eq 'Alpha'", ['Alpha', 'Kappa']],
  ["deleted in [true, false] and name in ['Kappa', 'Beta']", ['Beta', 'Kappa']],
  ["name eq 'Alpha' or name eq 'Beta'", ['Alpha', 'Beta']],
  ["(name eq 'Alpha' or name eq 'Beta') and base_currency eq 'USD'", ['Beta']],
  ["name eq 'Alpha' or name eq 'Beta' and base_currency eq 'USD'", ['Alpha', 'Beta']],
  ["name eq 'Alpha' or (name eq 'Beta' and base_currency eq 'EUR')", ['Alpha']],
  ["name eq 'Beta' and base_currency eq 'USD' or name eq 'Alpha'", ['Alpha', 'Beta']],
  ["((name eq 'Alpha'))", ['Alpha']],
  ["( name eq 'Alpha' )", ['Alpha']],
  ["(base_currency eq 'EUR' and (status eq 'INACTIVE' or archived eq true))", ['Zeta']],
  ["base_currency eq 'EUR' and status eq 'INACTIVE' or archived eq true", ['Zeta', "O'Neil's"]],
  ['version eq 1', ALL],
  ['version gt 1', []],
  ["owned_by_user_id eq '{ann}'", ['Alpha', 'Gamma', 'Epsilon', "O'Neil's", 'Star*Fund']],
  ["owned_by_user_id neq '{ann}'", ['Beta', 'Delta', 'Zeta', 'Theta']],
  ["id eq '{Alpha}'", ['Alpha']],
  ["id in ['{Alpha}', '{Zeta}']", ['Alpha', 'Zeta']],
  ["config.manager_settings.policy_id eq '{policy}'", ['Gamma', 'Delta']],
  ['config.manager_settings.policy_id eq null', without('Gamma', 'Delta')],
  ['orderby name', ['Alpha', 'Beta', 'Delta', 'Epsilon', 'Gamma', "O'Neil's", 'Star*Fund', 'Theta', 'Zeta']],
  ['orderby name asc', ['Alpha', 'Beta', 'Delta', 'Epsilon', 'Gamma', "O'Neil's", 'Star*Fund', 'Theta', 'Zeta']],
  ['orderby name desc', ['Zeta', 'Theta', 'Star*Fund', "O'Neil's", 'Gamma', 'Epsilon', 'Delta', 'Beta', 'Alpha']],
  [`orderby ${D} desc, name`, ['Epsilon', 'Delta', 'Theta', 'Gamma', 'Alpha', 'Beta', "O'Neil's", 'Star*Fund', 'Zeta']],
  [`orderby ${D}, name desc`, ['Gamma', 'Theta', 'Delta', 'Epsilon', 'Zeta', 'Star*Fund', "O'Neil's", 'Beta', 'Alpha']],
  ["base_currency eq 'EUR' orderby name desc", ['Zeta', 'Theta', 'Star*Fund', 'Gamma', 'Delta', 'Alpha']],
  ['orderby creation_datetime desc', [...ALL].reverse()],
  ['orderby base_currency, name', ['Epsilon', 'Alpha', 'Delta', 'Gamma', 'Star*Fund', 'Theta', 'Zeta', "O'Neil's", 'Beta']],
  ['orderby funded_since desc, id', ['Delta', 'Gamma', 'Alpha', 'Beta', 'Epsilon', 'Zeta', "O'Neil's", 'Theta', 'Star*Fund']],
  ['orderby config.manager_settings.active, name', ['Zeta', 'Alpha', 'Beta', 'Delta', 'Epsilon', 'Gamma', "O'Neil's", 'Star*Fund', 'Theta']],
  ["status eq 'INACTIVE' orderby name select name", ["O'Neil's", 'Zeta']],
  ["name eq 'Alpha' select name, config.manager", ['Alpha']],
  ['select name', ALL],
];

/** Keywords in other cases and other white space give the same answers. */
const variants: [string, string[]][] = [
  ["name EQ 'Alpha'", ['Alpha']],
  ["name Eq 'Alpha'", ['Alpha']],
  ["name eq 'Alpha' OR name EQ 'Beta'", ['Alpha', 'Beta']],
  ["name eq 'Alpha' Or name eq 'Beta'", ['Alpha', 'Beta']],
  ["name eq 'Beta' AND base_currency eq 'USD'", ['Beta']],
  ["name IN ['Alpha', 'Zeta']", ['Alpha', 'Zeta']],
  [`${D} IN [0 TO 300]`, ['Gamma', 'Delta', 'Theta']],
  ['archived eq TRUE', ["O'Neil's"]],
  ['archived eq False', without("O'Neil's")],
  ['external_id eq NULL', without('Alpha', 'Beta')],
  ['external_id NEQ Null', ['Alpha', 'Beta']],
  [`${D} GT 100`, ['Delta', 'Epsilon']],
  [`${D} Ge 100`, ['Delta', 'Epsilon', 'Theta']],
  [`${D} LT 1`, ['Gamma']],
  [`${D} LE 0`, ['Gamma']],
  ['ORDERBY name DESC', ['Zeta', 'Theta', 'Star*Fund', "O'Neil's", 'Gamma', 'Epsilon', 'Delta', 'Beta', 'Alpha']],
  ['OrderBy name Asc', ['Alpha', 'Beta', 'Delta', 'Epsilon', 'Gamma', "O'Neil's", 'Star*Fund', 'Theta', 'Zeta']],
  ["name eq 'Alpha' SELECT name", ['Alpha']],
  ["name\teq\t'Alpha'", ['Alpha']],
  ["name eq 'Alpha'\nor\nname eq 'Beta'", ['Alpha', 'Beta']],
  ["  name   eq   'Alpha'  ", ['Alpha']],
  ["name in ['Alpha','Zeta']", ['Alpha', 'Zeta']],
  ["name in [ 'Alpha' , 'Zeta' ]", ['Alpha', 'Zeta']],
  ["(name eq 'Alpha')or(name eq 'Beta')", ['Alpha', 'Beta']],
  ['orderby name desc,base_currency', ['Zeta', 'Theta', 'Star*Fund', "O'Neil's", 'Gamma', 'Epsilon', 'Delta', 'Beta', 'Alpha']],
];

/** Strings that look like SQL are literals: they match nothing and change nothing. */
const injections = [
  "name eq 'x'' or ''1''=''1'",
  "name eq '''; drop table entities; --'",
  "name eq 'Alpha'' --'",
  "external_id eq '$1'",
  "external_id eq '?'",
  "name eq '%' or name eq '_'",
  "name in ['x'') or true --', 'y']",
  "name eq 'a\"b'",
  "name eq 'Robert''); drop table entity_versions;--'",
];

const rejected: [string, number][] = [
  ['name eq', 7],
  ['name', 4],
  ["name eq 'Alpha", 8],
  ["nme eq 'x'", 0],
  ['NAME eq 1', 0],
  ['config.manager_settings.nope eq 1', 0],
  ['name gt', 7],
  ["name eq 'A' and", 15],
  ["name eq 'A' or or name eq 'B'", 15],
  ["(name eq 'A'", 12],
  ["name eq 'A')", 11],
  ['name is null', 5],
  ["name eq 'A' orderby", 19],
  ['orderby', 7],
  ['orderby name sideways', 13],
  ['select', 6],
  ['name in []', 9],
  ["name in ['a' to]", 15],
  ["name eq '\\'; delete from entities; --'", 11],
  ["name like 'x'", 5],
  [`${D} eq 'abc'`, 0],
  ["funded_since eq 'yesterday'", 0],
  ["funded_since in ['2021-02-30' to '2021-03-01']", 0],
  ["funded_since in ['2021-01-01' to 5]", 0],
  ["archived eq 'yes'", 0],
  ['archived gt true', 0],
  ['config eq 1', 0],
  ["config.manager_settings.tags gt 'a'", 0],
  ['orderby config', 8],
  ['orderby config.manager_settings.tags', 8],
  ["name eq 'A' select nope", 19],
  ['name eq 1.2.3', 11],
  ['name eq -', 8],
  ["name eq 'a' and (status eq 1", 28],
  ['; drop table entities', 0],
  ["name eq 'x'; drop table entities", 11],
  ["name eq 'x' -- comment", 12],
  ["'x' eq name", 0],
  ['name eq true', 0],
  [`${D} eq null and`, 0 + `${D} eq null and`.length],
  ['name eq "Alpha"', 8],
  ["name eq 'A' orderby name select", 31],
  ['funded_since lt true', 0],
  ["name eq 'A' and and name eq 'B'", 16],
  ['portfolio.APPLE gt 1', 0],
  ['readable_by gt 1', 0],
];

describe('query language conformance', function () {
  this.timeout(60_000);
  let platform: TestPlatform;
  let api: Api;
  const ids: Record<string, string> = {};
  const expand = (q: string) => q.replace(/\{([^}]+)\}/g, (_, name: string) => ids[name] ?? `{${name}}`);
  const ask = (q: string) => api('GET', `/portfolios/?limit=100&query=${encodeURIComponent(expand(q))}`);

  before(async () => {
    platform = await startTestPlatform();
    api = await machineApi(platform, await platform.tenant());
    const ann = (await api('POST', '/users/', build.user())).body.id;
    const bob = (await api('POST', '/users/', build.user())).body.id;
    const policy = (await api('POST', '/policies/', build.policy())).body.id;
    Object.assign(ids, { ann, bob, policy });
    const user = (owner: string, over: Record<string, unknown>, settings: Record<string, unknown> = {}) =>
      build.portfolio(owner, { ...over, config: { manager: 'USER_MANAGED', manager_version: 1, manager_settings: settings } });
    const robo = (owner: string, manager: string, over: Record<string, unknown>, settings: Record<string, unknown>) =>
      build.portfolio(owner, { ...over, config: { manager, manager_version: 1, manager_settings: settings } });
    const fixtures: [string, Record<string, unknown>][] = [
      ['Alpha', user(ann, { external_id: 'ext-1', portfolio: { $EUR: 100 } }, { tags: ['growth', 'esg'] })],
      ['Beta', user(bob, { external_id: 'ext-2', base_currency: 'USD', portfolio: { $USD: 2500.5 } }, { tags: ['income'] })],
      [
        'Gamma',
        robo(
          ann,
          'ROBO_ADVISOR_DISCRETIONARY',
          { funded_since: '2021-06-15T10:00:00.000Z', portfolio: { IE00B4L5Y983: 3 } },
          { policy_id: policy, divest_amount: 0, start_amount: 1000 },
        ),
      ],
      [
        'Delta',
        robo(
          bob,
          'ROBO_ADVISOR_ADVISORY',
          { funded_since: '2022-01-01T00:00:00.000Z', brokerage_account: { bank_account_type: 'IBAN', bank_account_number: 'DE89370400440532013000' } },
          { policy_id: policy, divest_amount: 250.75 },
        ),
      ],
      ['Epsilon', robo(ann, 'ROBO_ADVISOR_ADVISORY', { base_currency: 'CHF' }, { divest_amount: 1e100 })],
      ['Zeta', robo(bob, 'ROBO_ADVISOR_DISCRETIONARY', {}, { divest_amount: null, active: false })],
      ["O'Neil's", user(ann, { base_currency: 'GBP' })],
      ['Theta', robo(bob, 'ROBO_ADVISOR_DISCRETIONARY', { money_type: 'PAPER_MONEY' }, {})],
      ['Star*Fund', user(ann, {})],
      ['Kappa', user(ann, {})],
    ];
    for (const [name, body] of fixtures) {
      const res = await api('POST', '/portfolios/', { ...body, name });
      assert.equal(res.status, 201, `${name}: ${res.text}`);
      ids[name] = res.body.id;
    }
    await api('PATCH', `/portfolios/${ids["O'Neil's"]}`, { archived: true });
    await api('DELETE', `/portfolios/${ids.Kappa}`);
    // Amounts stored as numeric strings (as older records may have them) compare numerically.
    await platform.database.db.raw(`update entities set doc = jsonb_set(doc, '{config,manager_settings,divest_amount}', '"100"') where id = ?`, [ids.Theta!]);
    // Archiving bumped one version; reset it so that `version eq 1` names every live portfolio.
    await platform.database.db('entities').where({ id: ids["O'Neil's"] }).update({ version: 1 });
  });
  after(() => platform.stop());

  for (const [query, names] of [...accepted, ...variants]) {
    it(`accepts ${JSON.stringify(query)}`, async () => {
      const res = await ask(query);
      assert.equal(res.status, 200, res.text);
      const byId = Object.fromEntries(Object.entries(ids).map(([n, id]) => [id, n]));
      assert.deepEqual(
        res.body.results.map((p: { id: string }) => byId[p.id]),
        names,
      );
      assert.equal(res.body.count, names.length);
    });
  }

  for (const query of injections) {
    it(`treats ${JSON.stringify(query)} as a literal`, async () => {
      const res = await ask(query);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body.results, []);
      assert.equal((await ask('')).body.count, ALL.length, 'nothing was changed');
    });
  }

  for (const [query, position] of rejected) {
    it(`rejects ${JSON.stringify(query)} at position ${position}`, async () => {
      const res = await ask(query);
      assertProblem(res, 400, 'invalid_query');
      assert.equal(res.body.position, position, res.body.detail);
      assert.match(res.body.detail, new RegExp(`position ${position}\\b`));
    });
  }

  it('returns only the selected fields and the id', async () => {
    const res = await ask("name eq 'Alpha' select name, config.manager");
    assert.deepEqual(res.body.results, [{ id: ids.Alpha, name: 'Alpha', config: { manager: 'USER_MANAGED' } }]);
  });

  it('counts all matches, not the page, and links the next page with every parameter', async () => {
    const res = await api('GET', `/portfolios/?limit=4&query=${encodeURIComponent("base_currency eq 'EUR'")}`);
    assert.equal(res.body.count, 6);
    assert.equal(res.body.results.length, 4);
    const next = new URL(res.body.next, 'http://x');
    assert.deepEqual(Object.fromEntries(next.searchParams), { limit: '4', offset: '4', query: "base_currency eq 'EUR'" });
    const last = await api('GET', res.body.next);
    assert.equal(last.body.results.length, 2);
    assert.equal(last.body.next, null);
  });
});
