/** Column headings in words for the fields of the interface's entities. Pure. */

const LABELS: Record<string, string> = {
  id: 'Id',
  external_id: 'External id',
  creation_datetime: 'Created',
  version: 'Version',
  version_datetime: 'Last change',
  version_authored_by_user_id: 'Changed by',
  owned_by_user_id: 'Owner',
  owned_by_user_ids: 'Further owners',
  user_id: 'User',
  email: 'E-mail',
  money_type: 'Money type',
  base_currency: 'Base currency',
  'config.manager': 'Manager',
  'config.manager_settings.policy_id': 'Policy',
  'config.manager_settings.goal_id': 'Goal',
  'config.manager_settings.horizon_id': 'Horizon',
  'config.manager_settings.risk_profile_id': 'Risk profile',
  'config.manager_settings.divest_amount': 'Amount to divest',
  funded_since: 'Funded since',
};

/**
 * The heading of a field: a known field by its name in words, any other from its last step with
 * underscores as spaces, without an `_id` suffix, and a capital first letter.
 */
export function headingLabel(path: string): string {
  if (Object.hasOwn(LABELS, path)) return LABELS[path]!;
  const last = path.split('.').pop() ?? path;
  const words = last
    .replace(/_id$/, '')
    .replace(/_datetime$/, '_time')
    .replace(/_/g, ' ')
    .trim();
  return words ? words[0]!.toUpperCase() + words.slice(1) : path;
}
