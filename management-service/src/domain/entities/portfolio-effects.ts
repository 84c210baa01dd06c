import { portfolioEvents } from '../events.ts';
import type { Doc } from '../merge.ts';
import type { EntityEffects } from './effects.ts';

const divestAmount = (doc: Doc) => ((doc.config as Doc).manager_settings as Doc | undefined)?.divest_amount;

/**
 * A portfolio change causes the outbound events of the interface's catalogue (with a flow's extra
 * ones, in one insert) and, when a withdrawal is requested (divest_amount changed), an optimizer
 * request for a robo-advised portfolio.
 */
export const portfolioEffects: EntityEffects = async ({ before, after, now, brokerIntegration, extra }, ports) => {
  const owner = await ports.ownerOf(after.doc.owned_by_user_id);
  if (owner) await ports.emit([...portfolioEvents(before, after, owner, brokerIntegration, now), ...(extra?.(owner, after) ?? [])]);
  const divest = divestAmount(after.doc);
  if (before && !after.deleted && divest !== undefined && divest !== divestAmount(before.doc)) await ports.requestOptimization('DIVEST_AMOUNT');
};
