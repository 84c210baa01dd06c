import type { Doc } from './merge.ts';

export type PortfolioStatus = 'INACTIVE' | 'WAITING_FOR_POLICY' | 'WAITING_FOR_ACCOUNT' | 'WAITING_FOR_FUNDS' | 'ACTIVE';

export const ROBO_MANAGERS = new Set(['ROBO_ADVISOR_ADVISORY', 'ROBO_ADVISOR_DISCRETIONARY']);

/** docs/adr/0008-portfolio-status.md: derived on every change, never patched; the first rule that holds wins. */
export function deriveStatus(doc: Doc, brokerIntegration: 'CLIENT' | 'SERVICE'): PortfolioStatus {
  const config = doc.config as { manager: string; manager_settings?: Record<string, unknown> };
  const settings = config.manager_settings ?? {};
  const robo = ROBO_MANAGERS.has(config.manager);
  const real = doc.money_type === 'REAL_MONEY';
  if (doc.archived === true || settings.active === false) return 'INACTIVE';
  if (robo && !settings.policy_id) return 'WAITING_FOR_POLICY';
  if (real && brokerIntegration === 'SERVICE' && !doc.brokerage_account) return 'WAITING_FOR_ACCOUNT';
  if (real && robo && !doc.funded_since) return 'WAITING_FOR_FUNDS';
  return 'ACTIVE';
}
