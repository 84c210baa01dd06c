// Run with `npx tsx clients/examples/quick-start.ts` while `npm start` runs: it reads the demo
// tenant's credentials from .data/credentials.json (PLATFORM_DATA_DIR moves .data).
import { readFileSync } from 'node:fs';
import { createDataClient, createManagementClient, isProblem } from '@platform/client';

const demo = JSON.parse(readFileSync(`${process.env.PLATFORM_DATA_DIR ?? '.data'}/credentials.json`, 'utf8'));

// Logs in with the access key on the first call, renews the token before it expires.
const api = createManagementClient({
  baseUrl: demo.management_url,
  credentials: { accessKeyId: demo.access_key_id, secretAccessKey: demo.secret_access_key },
});

// Every POST carries a new Idempotency-Key, and its retries (429, 503, a lost answer) the same one.
const { data: user } = await api.POST('/users/', { body: { first_name: 'Ada', last_name: 'Lovelace' } });
const { data: portfolio } = await api.POST('/portfolios/', {
  body: {
    name: 'Savings',
    owned_by_user_id: user!.id,
    base_currency: 'EUR',
    money_type: 'REAL_MONEY',
    config: { manager: 'USER_MANAGED', manager_version: 1, manager_settings: {} },
  },
});
console.log(`user ${user!.id} owns portfolio ${portfolio!.id} (${portfolio!.status})`);

// Every match of a query, page after page.
for await (const found of api.items('/portfolios/', { query: { query: `owned_by_user_id eq '${user!.id}'`, limit: 50 } })) {
  console.log(`found portfolio ${found.id}`);
}

// A refusal is an ApiProblem: status, code, title, detail, the position of a query error, the request id.
try {
  await api.GET('/portfolios/', { params: { query: { query: "name eq 'Savings' andd" } } });
} catch (error) {
  if (!isProblem(error, 'invalid_query')) throw error;
  console.log(`${error.status} ${error.code} at position ${error.position}: ${error.detail} (request ${error.requestId})`);
}

// The tenant's events in commit order; keep feed.cursor to resume there next time.
const feed = api.events({ subject: 'portfolios', limit: 1000 });
for await (const event of feed) {
  if (event.data.id === portfolio!.id) console.log(`event ${event.subject}.${event.action} of ${portfolio!.id}`);
}
console.log(`next time, resume after cursor ${feed.cursor}`);

// The data interface with the tenant's API key: reference data of an instrument of the ROBO universe.
const data = createDataClient({ baseUrl: demo.data_url, tenantId: demo.tenant_id, apiKey: demo.api_key });
const { data: universe } = await data.GET('/data/reference/universe/', { params: { query: { universe_name: 'ROBO', fields: ['NAME'] } } });
const isin = Object.keys(universe!.data)[0]!;
const { data: reference } = await data.POST('/data/reference/query/', {
  body: { instrument_ids: [isin], fields: ['NAME', 'CURRENCY', 'PRICE'], fields_extra: [] },
});
console.log(`${isin}: ${JSON.stringify(reference!.data[isin])}`);
