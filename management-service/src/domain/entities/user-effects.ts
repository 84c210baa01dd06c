import type { EntityEffects } from './effects.ts';

/** A deleted user's access tokens stop working at once, not when they expire. */
export const userEffects: EntityEffects = async ({ before, after }, ports) => {
  if (after.deleted && !before?.deleted) await ports.revokeTokens('user_deleted');
};
