import { jsonEqual } from '../merge.ts';
import type { EntityEffects } from './effects.ts';

/**
 * A change of a policy's rules (its config) asks the optimizer for every robo-advised portfolio that follows it, in
 * the change's transaction (docs/adr/0021-optimizations.md); a new name or description changes no portfolio.
 */
export const policyEffects: EntityEffects = async ({ before, after }, ports) => {
  if (before && !after.deleted && !jsonEqual(before.doc.config, after.doc.config)) await ports.requestOptimizationsOfPolicy('POLICY');
};
