import { randomInt } from 'node:crypto';
import { newUlid } from '@platform/shared';
import { call } from './http.ts';
import type { TestPlatform, TestTenant } from './platform.ts';

/** Request bodies with sensible defaults; a test overrides only what it is about. */
export const build = {
  user: (over: Record<string, unknown> = {}) => ({ first_name: 'Ada', last_name: 'Lovelace', ...over }),
  portfolio: (ownerId: string, over: Record<string, unknown> = {}) => ({
    name: 'Pension',
    owned_by_user_id: ownerId,
    base_currency: 'EUR',
    money_type: 'REAL_MONEY',
    config: { manager: 'USER_MANAGED', manager_version: 1, manager_settings: {} },
    ...over,
  }),
  roboPortfolio: (ownerId: string, settings: Record<string, unknown> = {}, over: Record<string, unknown> = {}) =>
    build.portfolio(ownerId, { config: { manager: 'ROBO_ADVISOR_DISCRETIONARY', manager_version: 1, manager_settings: settings }, ...over }),
  policy: (over: Record<string, unknown> = {}) => ({
    name: 'Balanced',
    config: { model_portfolio: { IE00B4L5Y983: 0.6, IE00B3F81409: 0.35 }, asset_class_bands: { EQUITY: [0.5, 0.7] } },
    ...over,
  }),
  transaction: (over: Record<string, unknown> = {}) => ({ type: 'CASH', status: 'SETTLED', quantity: '100.50', currency: 'EUR', ...over }),
};

/**
 * A user whose every personal value is found nowhere else (for tests that look for them after an
 * erasure), and those values: names, e-mail, phone and the IBAN given.
 */
export function personalUser(iban: string) {
  const tag = newUlid().slice(-10).toLowerCase();
  const fields = {
    external_id: `crm-${tag}`,
    first_name: `Ottilie${tag}`,
    last_name: `Quarnstrom${tag}`,
    email: `ottilie.${tag}@example.net`,
    phone: `+4917${String(randomInt(100_000_000, 999_999_999))}`,
    counter_account: { bank_account_number: iban, bank_account_number_type: 'IBAN' },
  };
  return { body: { ...build.user(fields), ...fields }, needles: [fields.first_name, fields.last_name, fields.email, fields.phone, iban] };
}

export type Api = (method: string, path: string, body?: unknown, headers?: Record<string, string>) => ReturnType<typeof call>;

/** Calls of the management interface as the tenant's machine client (or with another token). */
export async function machineApi(platform: TestPlatform, tenant: TestTenant): Promise<Api & { token: string }> {
  const login = await call(`${platform.managementUrl}/auth/login/`, { body: { access_key_id: tenant.accessKeyId, secret_access_key: tenant.secret } });
  if (login.status !== 200) throw new Error(`login failed: ${login.text}`);
  return withToken(platform, login.body.access_token);
}

export function withToken(platform: TestPlatform, token: string): Api & { token: string } {
  const api = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    call(platform.managementUrl + path, { method, body, headers, token });
  return Object.assign(api, { token });
}

/** An end user's token, obtained by the machine client through POST /auth/user-token/. */
export async function userApi(platform: TestPlatform, machine: Api, userId: string): Promise<Api & { token: string }> {
  const res = await machine('POST', '/auth/user-token/', { user_id: userId });
  if (res.status !== 200) throw new Error(`user token failed: ${res.text}`);
  return withToken(platform, res.body.access_token);
}
