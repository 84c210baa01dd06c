import { checkHeldCash, lowersCash } from '../cash-holds.ts';
import { portfolioEvents } from '../events.ts';
import { jsonEqual, type Doc } from '../merge.ts';
import type { EntityEffects } from './effects.ts';

const divestAmount = (doc: Doc) => ((doc.config as Doc).manager_settings as Doc | undefined)?.divest_amount;

/**
 * A portfolio change causes the outbound events of the interface's catalogue (with a flow's extra
 * ones, in one insert) and, when a withdrawal is requested (divest_amount changed), an optimizer
 * request for a robo-advised portfolio and, when the service integrates the broker and the cash covers it, the payout;
 * a change of the holdings by a client asks for an optimization too. The gate decides whether the portfolio may get one.
 * A client may not lower the cash below what its instructions with the broker hold.
 */
export const portfolioEffects: EntityEffects = async ({ before, after, now, brokerIntegration, byClient, extra }, ports) => {
  // Cash held for a payout or orders with the broker is theirs until they settle (docs/adr/0022-execution-and-withdrawals.md):
  // a client's PATCH may not spend it. The refusal rolls the whole write back.
  if (before && byClient && !after.deleted && lowersCash(before.doc, after.doc)) checkHeldCash(before.doc, after.doc, await ports.heldCash());
  const owner = await ports.ownerOf(after.doc.owned_by_user_id);
  if (owner) await ports.emit([...portfolioEvents(before, after, owner, brokerIntegration, now), ...(extra?.(owner, after) ?? [])]);
  const divest = divestAmount(after.doc);
  // Only a client's change of divest_amount is a withdrawal request: the service lowering it as it pays
  // out (docs/adr/0022-execution-and-withdrawals.md) asks for nothing more.
  if (before && !after.deleted && byClient && divest !== undefined && divest !== divestAmount(before.doc)) {
    await ports.requestOptimization('DIVEST_AMOUNT');
    await ports.payOutDivestAmount();
  } else if (before && !after.deleted && byClient && !jsonEqual(before.doc.portfolio, after.doc.portfolio)) {
    // Holdings changed by a client (docs/adr/0021-optimizations.md); the service's own flows (a deposit, an
    // execution) ask for what they cause themselves, so an execution's fills never start another optimization.
    await ports.requestOptimization('HOLDINGS');
  }
};
