/**
 * The one rule for account names, wherever a name comes in: an agent's Hello and AccountsChanged, the account
 * management routes and RPCs. Names key the `accounts` rows, the cache and the Spinnaker credentials.
 */

const ACCOUNT_NAME = /^[a-z0-9]([-a-z0-9._]*[a-z0-9])?$/;

/** True for DNS-1123-like account names: lowercase alphanumerics, '-', '.', '_', at most 253 characters. */
export function isValidAccountName(name: string): boolean {
  return name.length <= 253 && ACCOUNT_NAME.test(name);
}
