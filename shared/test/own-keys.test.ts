import assert from 'node:assert/strict';
import type { ErrorObject } from 'ajv';
import { PROTOTYPE_NAMES } from '@platform/test-support/prototype-names';
import { issueOf, validationProblem } from '../src/http/validation.ts';
import { ownValue, setOwn } from '../src/own-keys.ts';

describe('own keys: names of Object.prototype read and written as keys like any other', () => {
  it('ownValue finds only own keys; setOwn adds an own key and leaves the prototype', () => {
    for (const name of PROTOTYPE_NAMES) {
      const empty: Record<string, unknown> = {};
      assert.equal(ownValue(empty, name), undefined, name);
      setOwn(empty, name, 7);
      assert.equal(Object.getPrototypeOf(empty), Object.prototype, name);
      assert.equal(ownValue(empty, name), 7, name);
      assert.equal(JSON.stringify(empty), `{${JSON.stringify(name)}:7}`);
    }
    assert.equal(ownValue(undefined, 'a'), undefined);
  });

  it('a key that breaks a map’s propertyNames is located at the key, with the specific message', () => {
    const errors: ErrorObject[] = [
      {
        keyword: 'pattern',
        instancePath: '/requestBody/config/asset_class_bands',
        schemaPath: '#/propertyNames/pattern',
        params: { pattern: '^[A-Z]+$' },
        propertyName: 'constructor',
        message: 'must match pattern "^[A-Z]+$"',
      },
      {
        keyword: 'propertyNames',
        instancePath: '/requestBody/config/asset_class_bands',
        schemaPath: '#/propertyNames',
        params: { propertyName: 'constructor' },
        message: 'property name must be valid',
      },
    ];
    assert.deepEqual(issueOf(errors[0]!).loc, ['body', 'config', 'asset_class_bands', 'constructor']);
    assert.deepEqual(issueOf(errors[1]!).loc, ['body', 'config', 'asset_class_bands', 'constructor']);
    const problem = validationProblem(errors);
    assert.equal(problem.status, 422);
    assert.deepEqual(problem.extra.errors, [
      { loc: ['body', 'config', 'asset_class_bands', 'constructor'], msg: 'must match pattern "^[A-Z]+$"', type: 'pattern' },
    ]);
  });
});
