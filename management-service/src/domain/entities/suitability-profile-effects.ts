import { profileEvents } from '../events.ts';
import type { EntityEffects } from './effects.ts';

/** A suitability profile that names a portfolio tells the portfolio's integration it was created or updated. */
export const suitabilityProfileEffects: EntityEffects = async ({ before, after, now }, ports) => {
  if (typeof after.doc.portfolio_id !== 'string') return;
  const portfolio = await ports.find('portfolios', after.doc.portfolio_id);
  const owner = portfolio && (await ports.ownerOf(portfolio.doc.owned_by_user_id));
  await ports.emit(profileEvents(before, after, portfolio, owner, now));
};
