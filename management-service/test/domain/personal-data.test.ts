import assert from 'node:assert/strict';
import { entityKinds } from '../../src/domain/entities/catalog.ts';
import { NotPermitted } from '../../src/domain/errors.ts';
import { EXPORT_SECTIONS, PORTFOLIO_CHILDREN, exportFileName, mustExport } from '../../src/domain/personal-data.ts';

// The export's rules (docs/adr/0060-personal-data-export.md).
describe('the personal data export', () => {
  it('lets a machine client export any user, and a customer only themselves', () => {
    mustExport({ tenantId: 't', kind: 'machine', subject: 'AK1' }, 'U01');
    mustExport({ tenantId: 't', kind: 'user', subject: 'U01' }, 'U01');
    assert.throws(() => mustExport({ tenantId: 't', kind: 'user', subject: 'U02' }, 'U01'), NotPermitted);
  });

  it('exports every entity type kept under a portfolio, and describes each in the document', () => {
    const types = PORTFOLIO_CHILDREN.map((c) => c.type) as string[];
    for (const kind of entityKinds.filter((k) => k.parent)) {
      assert.equal(kind.parent!.type, 'portfolios', `${kind.type} is kept under another parent than a portfolio: the export must read it`);
      assert.ok(types.includes(kind.type), `${kind.type} is kept under a portfolio but is not exported with it`);
    }
    for (const type of types) assert.ok(EXPORT_SECTIONS.portfolios!.includes(`${type}:`), `the portfolios section names ${type}`);
  });

  it('names the file after the user', () => assert.equal(exportFileName('U01'), 'user-U01-export.json'));
});
