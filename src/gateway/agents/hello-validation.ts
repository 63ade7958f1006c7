/**
 * Validation of an agent's Hello (and of the account descriptions in AccountReports): a bad Hello is refused as a
 * whole with INVALID_ARGUMENT before anything is written.
 */
import type { AccountInfo, Hello } from '../../gen/outpost/agent/v1/agent_pb.js';
import { findUnstorableText } from '../../shared/unstorable-text.js';
import { isValidAccountName } from '../../shared/account-name.js';
import { invalidArgument } from '../http/errors.js';

/** Highest `hello.connection`: an agent keeps at most two connections (`clouddriver.connections`). */
const MAX_CONNECTION_INDEX = 1;

/** Most accounts one Hello may carry. */
export const MAX_ACCOUNTS_PER_HELLO = 1000;

/** Throws INVALID_ARGUMENT describing the first problem of the Hello. */
export function validateHello(hello: Hello): void {
  // Postgres cannot store a NUL character (or jsonb an escaped lone surrogate): refused here, not by a failing insert
  const unstorable = findUnstorableText(hello, 'hello');
  if (unstorable) throw invalidArgument(unstorable);
  if (!hello.agentId.trim()) throw invalidArgument('hello.agent_id must not be empty');
  if (hello.agentId.length > 253) throw invalidArgument('hello.agent_id is longer than 253 characters');
  if (hello.connection > MAX_CONNECTION_INDEX) {
    throw invalidArgument(`hello.connection is ${hello.connection}; an agent has at most ${MAX_CONNECTION_INDEX + 1} connections (0 or 1)`);
  }
  if (hello.accounts.length > MAX_ACCOUNTS_PER_HELLO) {
    throw invalidArgument(`hello carries ${hello.accounts.length} accounts; at most ${MAX_ACCOUNTS_PER_HELLO} are allowed`);
  }
  const seen = new Set<string>();
  for (const account of hello.accounts) {
    validateAccountInfo(account, 'hello');
    if (seen.has(account.name)) throw invalidArgument(`hello lists account ${JSON.stringify(account.name)} twice`);
    seen.add(account.name);
  }
}

/** Throws INVALID_ARGUMENT when the account description is unusable. */
export function validateAccountInfo(account: AccountInfo, where: string): void {
  const unstorable = findUnstorableText(account, `${where}.account`);
  if (unstorable) throw invalidArgument(unstorable);
  if (!isValidAccountName(account.name)) {
    throw invalidArgument(
      `${where}: account name ${JSON.stringify(account.name)} is invalid (lowercase letters, digits, '-', '.', '_'; must start and end alphanumeric; at most 253 characters)`,
    );
  }
  // An account whose cluster the agent could not load or reach has no API host: it fails alone (admission.ts).
  if (!account.apiHost && !account.error)
    throw invalidArgument(`${where}: account ${account.name} has no api_host (and no error saying why)`);
  for (const kind of account.kinds) {
    if (!kind.apiVersion || !kind.kind) throw invalidArgument(`${where}: account ${account.name} lists a kind without api_version or kind`);
  }
}
