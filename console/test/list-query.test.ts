import assert from 'node:assert/strict';
import { collectionByKey, entityName, isEntityId, valueAt } from '../src/lib/collections.ts';
import { headingLabel } from '../src/lib/headings.ts';
import { compileFilters, containsValue, currentOrder, pageOffsets, pageSize, splitQuery, toggleOrder, withFilter } from '../src/lib/list-query.ts';

const portfolios = collectionByKey('portfolios')!.filters;
const users = collectionByKey('users')!.filters;

describe('console: quick filters written as the query language', () => {
  it('compiles each chosen filter to an equal term, joined by and, the text to any of its fields', () => {
    assert.equal(
      compileFilters(portfolios, { status: 'ACTIVE', manager: 'USER_MANAGED', moneyType: 'PAPER_MONEY', text: ' Pens ' }),
      "status eq 'ACTIVE' and config.manager eq 'USER_MANAGED' and money_type eq 'PAPER_MONEY' and (name eq '*Pens*' or external_id eq '*Pens*')",
    );
    assert.equal(compileFilters(users, { text: 'ada@' }), "(first_name eq '*ada@*' or last_name eq '*ada@*' or email eq '*ada@*' or external_id eq '*ada@*')");
    assert.equal(compileFilters(collectionByKey('profiles')!.filters, { text: 'crm' }), "external_id eq '*crm*'");
    assert.equal(compileFilters(portfolios, {}), '');
  });

  it('leaves out a value the collection does not offer, as from an edited URL', () => {
    assert.equal(compileFilters(portfolios, { status: "ACTIVE' or status neq '", moneyType: 'GOLD' }), '');
    assert.equal(compileFilters(users, { manager: 'USER_MANAGED', status: 'ACTIVE' }), "status eq 'ACTIVE'");
  });

  it("keeps the operator's quotes, stars and backslashes literal inside the text", () => {
    assert.equal(containsValue("O'Brien"), "'*O''Brien*'");
    assert.equal(containsValue('5*'), "'*5\\**'");
    assert.equal(containsValue('a\\b'), "'*a\\b*'");
    // No escape for a final backslash exists: it is looked for at the end.
    assert.equal(containsValue('dir\\'), "'*dir\\'");
  });

  it('replaces the filter part of a query, keeping its ordering and selection', () => {
    assert.equal(withFilter("name eq 'x' orderby name desc select name", "status eq 'ACTIVE'"), "status eq 'ACTIVE' orderby name desc select name");
    assert.equal(withFilter('orderby version', ''), 'orderby version');
    assert.equal(withFilter('', "status eq 'ACTIVE'"), "status eq 'ACTIVE'");
  });
});

describe('console: a query cut into its parts', () => {
  it('finds orderby and select outside quoted strings, in any letter case', () => {
    assert.deepEqual(splitQuery("name eq 'orderby select' OrderBy name Select name, status"), {
      filter: "name eq 'orderby select'",
      orderby: 'OrderBy name',
      select: 'Select name, status',
    });
    assert.deepEqual(splitQuery("name eq 'it''s orderby'"), { filter: "name eq 'it''s orderby'", orderby: '', select: '' });
    assert.deepEqual(splitQuery('selection eq 1 orderby config.select'), { filter: 'selection eq 1', orderby: 'orderby config.select', select: '' });
  });
});

describe('console: sorting by a heading', () => {
  it('orders ascending first, then the other way round, keeping filter and selection', () => {
    const once = toggleOrder("status eq 'ACTIVE' select name", 'name');
    assert.equal(once, "status eq 'ACTIVE' orderby name select name");
    assert.deepEqual(currentOrder(once), { path: 'name', descending: false });
    const twice = toggleOrder(once, 'name');
    assert.equal(twice, "status eq 'ACTIVE' orderby name desc select name");
    assert.deepEqual(currentOrder(twice), { path: 'name', descending: true });
    assert.equal(toggleOrder(twice, 'name'), "status eq 'ACTIVE' orderby name select name");
  });

  it('replaces an ordering by another field, several keys included', () => {
    assert.equal(toggleOrder('orderby last_name desc, first_name', 'version_datetime'), 'orderby version_datetime');
    assert.deepEqual(currentOrder('orderby last_name DESC, first_name'), { path: 'last_name', descending: true });
    assert.equal(currentOrder("name eq 'x'"), undefined);
  });
});

describe('console: pages of a collection', () => {
  it('takes a page size of the offered ones only', () => {
    assert.equal(pageSize('50'), 50);
    assert.equal(pageSize('101'), 20);
    assert.equal(pageSize('0'), 20);
    assert.equal(pageSize(null), 20);
  });

  it('goes back no further than the first page and forward only when there is a next one', () => {
    assert.deepEqual(pageOffsets(0, 10, true), { previous: undefined, next: 10 });
    assert.deepEqual(pageOffsets(15, 10, false), { previous: 5, next: undefined });
    assert.deepEqual(pageOffsets(5, 10, true), { previous: 0, next: 15 });
  });
});

describe('console: headings and names in words', () => {
  it('names known fields in words and others from their last step', () => {
    assert.equal(headingLabel('external_id'), 'External id');
    assert.equal(headingLabel('creation_datetime'), 'Created');
    assert.equal(headingLabel('owned_by_user_id'), 'Owner');
    assert.equal(headingLabel('config.manager_settings.policy_id'), 'Policy');
    assert.equal(headingLabel('questionnaire_id'), 'Questionnaire');
    assert.equal(headingLabel('config.manager_settings.optimization_cooldown_end'), 'Optimization cooldown end');
    assert.equal(headingLabel('snapshot_datetime'), 'Snapshot time');
    assert.equal(headingLabel('constructor'), 'Constructor');
  });

  it('calls a user by name, else e-mail, and any other entity by name, else external id', () => {
    assert.equal(entityName({ first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com' }), 'Ada Lovelace');
    assert.equal(entityName({ first_name: null, last_name: ' ', email: 'ada@example.com' }), 'ada@example.com');
    assert.equal(entityName({ name: 'Growth' }), 'Growth');
    assert.equal(entityName({ name: '', external_id: 'crm-1' }), 'crm-1');
    assert.equal(entityName({ id: 'x' }), undefined);
    assert.equal(entityName(null), undefined);
  });

  it('reads own fields only and knows an id when it sees one', () => {
    assert.equal(valueAt({ config: { manager: 'USER_MANAGED' } }, 'config.manager'), 'USER_MANAGED');
    assert.equal(valueAt({}, 'constructor'), undefined);
    assert.equal(isEntityId('P01HZC48CNR9YNY5M4C8F5S2HT9'), true);
    assert.equal(isEntityId('P01HZC48CNR9YNY5M4C8F5S2HTU'), false);
    assert.equal(isEntityId(42), false);
  });
});
