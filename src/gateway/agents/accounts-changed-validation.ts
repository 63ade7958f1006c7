/**
 * Validation of an AccountsChanged message against the accounts the stream already announced: a bad change is refused
 * as a whole with INVALID_ARGUMENT before anything is released, admitted or written.
 */
import type { AccountsChanged } from '../../gen/outpost/agent/v1/agent_pb.js';
import { invalidArgument } from '../http/errors.js';
import { isValidAccountName } from '../../shared/account-name.js';
import { MAX_ACCOUNTS_PER_HELLO, validateAccountInfo } from './hello-validation.js';

/**
 * Throws INVALID_ARGUMENT describing the first problem: an invalid name or account description, a name listed twice
 * in `removed` or in `added`, an added name the stream already announced without removing it in the same change, or
 * more accounts than a Hello may carry once applied. Removing a name the stream never announced is allowed (no-op).
 */
export function validateAccountsChanged(change: AccountsChanged, announced: ReadonlySet<string>): void {
  if (change.removed.length === 0 && change.added.length === 0) throw invalidArgument('accounts_changed lists no account');
  const removed = new Set<string>();
  for (const name of change.removed) {
    if (!isValidAccountName(name)) throw invalidArgument(`accounts_changed.removed: account name ${JSON.stringify(name)} is invalid`);
    if (removed.has(name)) throw invalidArgument(`accounts_changed.removed lists account ${JSON.stringify(name)} twice`);
    removed.add(name);
  }
  const added = new Set<string>();
  for (const info of change.added) {
    validateAccountInfo(info, 'accounts_changed.added');
    if (added.has(info.name)) throw invalidArgument(`accounts_changed.added lists account ${JSON.stringify(info.name)} twice`);
    if (announced.has(info.name) && !removed.has(info.name)) {
      throw invalidArgument(
        `accounts_changed.added: account ${JSON.stringify(info.name)} is already served on this stream; remove it first`,
      );
    }
    added.add(info.name);
  }
  let total = added.size;
  for (const name of announced) if (!removed.has(name)) total++;
  if (total > MAX_ACCOUNTS_PER_HELLO) {
    throw invalidArgument(`accounts_changed would leave ${total} accounts on the stream; at most ${MAX_ACCOUNTS_PER_HELLO} are allowed`);
  }
}
