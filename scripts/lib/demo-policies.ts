// `npm start`'s sample policies for the demo tenant, made through the two interfaces as a client
// would: the instruments come from the data service's reference data, the policies are created
// (once, found again by their external_id) by the management service's own request path.
import { demoForeignPolicy, demoPolicies, policyPatch, unpricedIsins, type PolicyInstrument } from '@platform/data-service/sample/demo-policies';

export type DemoAccess = { tenant_id: string; management_url: string; data_url: string; access_key_id: string; secret_access_key: string; api_key: string };

type Stored = { id: string; deleted: boolean; config: { model_portfolio?: Record<string, unknown>; asset_class_bands?: Record<string, unknown> } };

const FIELDS = ['INSTRUMENT_TYPE', 'ASSET_CLASS', 'ASSET_SUBCLASS', 'REGION', 'CURRENCY', 'PRICE', 'TER'];

/** The JSON answer of a call that must succeed. */
async function ok<T>(what: string, url: string, init: RequestInit = {}): Promise<T> {
  const res = await fetch(url, init);
  const text = await res.text();
  if (!res.ok) throw new Error(`demo policies: ${what} answered ${res.status} ${text}`);
  return JSON.parse(text) as T;
}

/** The authorization header of the demo tenant's machine client, from a login with its access key. */
async function machineAuth(access: DemoAccess): Promise<{ authorization: string }> {
  const login = await ok<{ access_token: string }>('the login', `${access.management_url}/auth/login/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ access_key_id: access.access_key_id, secret_access_key: access.secret_access_key }),
  });
  return { authorization: `Bearer ${login.access_token}` };
}

/**
 * Creates the demo tenant's sample policies that are missing, and brings one whose model names an
 * instrument the reference data no longer prices in its currencies up to date; the ids by level (a policy
 * someone deleted stays deleted and is left out). None when the reference data lacks the ETFs.
 */
export async function ensureDemoPolicies(access: DemoAccess, log: (line: string) => void): Promise<Record<string, string>> {
  const { management_url: m, data_url: d } = access;
  const keys = { 'x-tenant-id': access.tenant_id, 'x-api-key': access.api_key };
  const query = new URLSearchParams([['universe_name', 'GLOBAL'], ...FIELDS.map((f): [string, string] => ['fields', f])]);
  const reference = await ok<{ data: Record<string, Omit<PolicyInstrument, 'isin'>> }>('the reference data', `${d}/data/reference/universe/?${query}`, {
    headers: keys,
  });
  const instruments = Object.entries(reference.data).map(([isin, fields]): PolicyInstrument => ({ ...fields, isin }));
  const { policies, missing } = demoPolicies(instruments);
  if (missing.length > 0) {
    log(`no sample policies: the reference data has no ETF of ${missing.join(', ')} priced in EUR`);
    return {};
  }
  // The policy in dollars shows execution across currencies; without dollar equity ETFs the others still go.
  const foreign = demoForeignPolicy(instruments);
  if (foreign) policies.push(foreign);
  else log('no sample policy in USD: the reference data has no equity ETF priced in USD');

  const json = { 'content-type': 'application/json' };
  const auth = await machineAuth(access);
  const ids: Record<string, string> = {};
  for (const policy of policies) {
    const { level, ...body } = policy;
    // Naming `deleted` finds deleted policies too: their external_id stays taken.
    const find = encodeURIComponent(`external_id eq '${policy.external_id}' and (deleted eq true or deleted eq false)`);
    const found = await ok<{ results: Stored[] }>(`the search for ${policy.name}`, `${m}/policies/?query=${find}`, { headers: auth });
    const stored = found.results[0];
    if (!stored) {
      const created = await ok<{ id: string }>(`creating ${policy.name}`, `${m}/policies/`, {
        method: 'POST',
        headers: { ...auth, ...json },
        body: JSON.stringify(body),
      });
      ids[level] = created.id;
      continue;
    }
    if (stored.deleted) {
      log(`sample policy ${policy.name} (${stored.id}) is deleted; it stays so`);
      continue;
    }
    const currencies = policy.config.fx_cost_bps === undefined ? ['EUR'] : ['EUR', 'USD'];
    const stale = unpricedIsins(stored.config, instruments, currencies);
    if (stale.length > 0) {
      await ok(`updating ${policy.name}`, `${m}/policies/${stored.id}`, {
        method: 'PATCH',
        headers: { ...auth, ...json },
        body: JSON.stringify(policyPatch(stored, policy)),
      });
      log(
        `sample policy ${policy.name} (${stored.id}) named instruments the reference data does not price in ${currencies.join(' or ')} (${stale.join(', ')}); it holds the current choice now`,
      );
    }
    ids[level] = stored.id;
  }
  return ids;
}

/** The sample risk profiles: the default questionnaire's score bands (0–100), each with its sample policy. */
const RISK_PROFILES = [
  { level: 'defensive', name: 'Defensive', score: 0, risk_level: 1 },
  { level: 'conservative', name: 'Conservative', score: 20, risk_level: 2 },
  { level: 'balanced', name: 'Balanced', score: 40, risk_level: 4 },
  { level: 'growth', name: 'Growth', score: 60, risk_level: 5 },
  { level: 'aggressive', name: 'Aggressive', score: 80, risk_level: 6 },
];

/**
 * Creates the demo tenant's sample risk profiles that are missing (found again by their external_id): the bands an
 * accepted assessment of the default questionnaire falls in, each naming the sample policy of its level, so an
 * assessment onboards a robo portfolio. The ids by level; a deleted one stays deleted and is left out.
 */
export async function ensureDemoRiskProfiles(
  access: DemoAccess,
  policies: Record<string, string>,
  log: (line: string) => void,
): Promise<Record<string, string>> {
  const m = access.management_url;
  const json = { 'content-type': 'application/json' };
  const auth = await machineAuth(access);
  const ids: Record<string, string> = {};
  for (const { level, ...profile } of RISK_PROFILES) {
    const external_id = `sample-risk-profile-${level}`;
    const find = encodeURIComponent(`external_id eq '${external_id}' and (deleted eq true or deleted eq false)`);
    const found = await ok<{ results: { id: string; deleted: boolean }[] }>(`the search for ${profile.name}`, `${m}/risk-profiles/?query=${find}`, {
      headers: auth,
    });
    const stored = found.results[0];
    if (stored?.deleted) {
      log(`sample risk profile ${profile.name} (${stored.id}) is deleted; it stays so`);
      continue;
    }
    if (stored) {
      ids[level] = stored.id;
      continue;
    }
    const created = await ok<{ id: string }>(`creating ${profile.name}`, `${m}/risk-profiles/`, {
      method: 'POST',
      headers: { ...auth, ...json },
      body: JSON.stringify({ ...profile, external_id, policy_id: policies[level] ?? null }),
    });
    ids[level] = created.id;
  }
  return ids;
}
