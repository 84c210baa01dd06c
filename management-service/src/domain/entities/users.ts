import { emailKey } from '@platform/shared';
import { InvalidField, WriteOnceField } from '../errors.ts';
import { jsonEqual, mergePatch, type Doc } from '../merge.ts';
import type { EntityKind } from './kind.ts';
import { userEffects } from './user-effects.ts';

const WRITE_ONCE = ['email', 'phone'] as const;
const WHOLE = new Set(['counter_account']);

/** The interface's create sample spells the counter account type `bank_account_type`. */
function canonicalCounterAccount(body: Doc): Doc {
  const account = body.counter_account;
  if (!account || typeof account !== 'object' || Array.isArray(account) || !Object.hasOwn(account, 'bank_account_type')) return body;
  const { bank_account_type, ...rest } = account;
  return { ...body, counter_account: { ...rest, bank_account_number_type: bank_account_type! } };
}

function withDefaults(doc: Doc): Doc {
  const account = doc.counter_account as Doc | undefined | null;
  return {
    external_id: null,
    first_name: null,
    last_name: null,
    email: null,
    phone: null,
    language: null,
    feature_flags: [],
    status: 'WAITING_FOR_VERIFICATION',
    brokerage_user_id: null,
    idp_user_id: null,
    products: [],
    ...doc,
    counter_account: account ? { bank_id: null, bank_id_type: null, ...account } : null,
  };
}

/** create_idp_user=true needs what the identity provider needs to reach the user. */
export function checkIdpUserRequirements(body: Doc): void {
  for (const field of ['email', 'phone']) {
    if (body[field] === undefined || body[field] === null) throw new InvalidField(['body', field], 'is required when create_idp_user is true');
  }
}

/**
 * create_idp_user=true asks for an identity provider account: what it needs is checked first, then
 * the contract's answer when the service manages no identity provider, which this one never does.
 */
function beforeCreate(body: Doc, query: Record<string, unknown>): void {
  if (query.create_idp_user !== true) return;
  checkIdpUserRequirements(body);
  throw new InvalidField(
    ['query', 'create_idp_user'],
    'cannot be true: this deployment manages no identity provider; create the user with create_idp_user=false',
  );
}

/**
 * The stored address sent again in another case is the same address (docs/adr/0040-identifiers-as-people-read-them.md):
 * accepted by the write-once rule, and the spelling stored first is kept.
 */
function sameEmailKept(current: Doc, patch: Doc): Doc {
  const { email, ...rest } = patch;
  const same = typeof email === 'string' && typeof current.email === 'string' && emailKey(email) === emailKey(current.email);
  return same ? rest : patch;
}

export const users: EntityKind = {
  type: 'users',
  letter: 'U',
  label: 'user',
  path: '/users/',
  idParam: 'user_id',
  operations: { create: 'createUser', get: 'getUser', update: 'updateUser', delete: 'deleteUser', versions: 'listUserVersions', list: 'listUsers' },
  schema: 'User',
  embeddable: [],
  beforeCreate,
  create: (body) => withDefaults(canonicalCounterAccount(body)),
  update: (current, body) => {
    const patch = sameEmailKept(current, canonicalCounterAccount(body));
    for (const field of WRITE_ONCE) {
      if (Object.hasOwn(patch, field) && current[field] !== null && current[field] !== undefined && !jsonEqual(current[field], patch[field])) {
        throw new WriteOnceField(['body', field]);
      }
    }
    return withDefaults(mergePatch(current, patch, WHOLE));
  },
  references: () => [],
  access: (_doc, id) => ({ readable_by: [id], modifiable_by: [id] }),
  effects: userEffects,
};
