/**
 * `--account` may be left out when the gateway has exactly one account: the CLI asks ListAccounts and uses it. With
 * none or several it stays a usage error (exit 2) that lists the choices, so a command never picks a cluster by guess.
 */
import { CliError, ExitCode } from './errors.js';
import { createReadClients, type GatewayTarget } from './gateway-transport.js';

/** How many account names a "several accounts" message lists before "…". */
const LISTED = 20;

/**
 * `account` when given; otherwise the gateway's only account. Throws CliError (exit 2) naming the choices when the
 * gateway has none or several; a gateway error (unreachable, 401, 403) rejects as it came, for the caller to report.
 */
export async function resolveAccount(target: GatewayTarget, account: string | undefined): Promise<string> {
  if (account) return account;
  const { accounts } = createReadClients(target);
  const res = await accounts.listAccounts({ page: 1 }, { timeoutMs: 30_000 });
  const names = res.accounts.map((a) => a.name);
  if (names.length === 1 && res.total <= 1) return names[0]!;
  if (names.length === 0) {
    throw new CliError('--account is required and the gateway has no accounts yet (is an agent connected?)', ExitCode.USAGE);
  }
  const total = Math.max(res.total, names.length);
  const listed = names.slice(0, LISTED).join(', ') + (total > LISTED ? ', …' : '');
  throw new CliError(
    `--account is required: the gateway has ${total} accounts (${listed}); pass --account NAME or set OUTPOST_ACCOUNT`,
    ExitCode.USAGE,
  );
}
