import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { loadOptimizer, type Outcome } from '../../src/optimizer/engine.ts';
import { baseCases } from './base-cases.ts';

// Portfolios wholly in their base currency are answered as before exchange rates entered the model
// (docs/adr/0020-optimizer-model.md): base-outcomes.json holds the outcomes the engine of commit
// 5ca8e83 gave for the same seeded requests, byte for byte.

const recorded = JSON.parse(readFileSync(new URL('./base-outcomes.json', import.meta.url), 'utf8')) as Outcome[];

describe('optimizer on base-currency portfolios', function () {
  this.timeout(120_000);

  it('answers every recorded case exactly as before', async () => {
    const optimizer = await loadOptimizer();
    const cases = baseCases(recorded.length);
    assert.equal(recorded.length, 80);
    // The cases reach orders, infeasible policies and nothing to do.
    assert.deepEqual(new Set(recorded.map((o) => o.status)), new Set(['SUCCESS', 'INFEASIBLE', 'NOT_OPTIMIZED']));
    cases.forEach(({ request, facts }, n) => assert.deepEqual(optimizer(request, facts), recorded[n], `case ${n}`));
  });

  it('asks for no rate at all, so the fx cost of a policy changes nothing', async () => {
    const optimizer = await loadOptimizer();
    const cases = baseCases(recorded.length);
    cases.forEach(({ request, facts }, n) => assert.deepEqual(optimizer({ ...request, fx_cost_bps: 75 }, facts), recorded[n], `case ${n}`));
  });
});
