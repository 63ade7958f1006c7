/**
 * `outpost accounts [NAME] [-o wide|json|yaml|name]`: the accounts the gateway knows (AccountService), as a table, or
 * one account in detail with the kinds it caches and the kinds it skipped. Needs the read role; changes nothing.
 */
import type { Command } from 'commander';
import { resolveDeps, type ClientCommandDeps } from '../../client/client-command.js';
import { describeAccount, formatAccounts, type AccountOutput } from '../../client/account-format.js';
import { ExitCode } from '../../client/errors.js';
import { createReadClients } from '../../client/gateway-transport.js';
import { configureReadCommand, openReadGateway, reportReadError, type ReadOptions } from '../../client/read-command.js';
import type { Account } from '../../gen/outpost/api/v1/account_service_pb.js';

/** Registers `accounts`. */
export function registerAccountsCommand(program: Command, deps?: ClientCommandDeps): void {
  const ctx = resolveDeps(deps);
  const cmd = program
    .command('accounts')
    .description('list the accounts (clusters) the gateway knows, or show one with its kinds and skipped kinds')
    .argument('[name]', 'one account to show in detail');
  configureReadCommand(cmd, ctx, ['wide', 'json', 'yaml', 'name']).action(async (name: string | undefined, opts: ReadOptions) => {
    const output = (opts.output ?? 'table') as AccountOutput;
    try {
      const { accounts } = createReadClients(await openReadGateway(ctx, opts));
      if (name) {
        const { account } = await accounts.getAccount({ name }, { timeoutMs: 30_000 });
        if (!account) throw new Error(`the gateway answered without account ${name}`);
        ctx.io.stdout(output === 'table' ? describeAccount(account) : formatAccounts([account], output, { single: true }));
        ctx.exit(ExitCode.OK);
        return;
      }
      const all: Account[] = [];
      for (let page = 1; ; page++) {
        const res = await accounts.listAccounts({ page }, { timeoutMs: 30_000 });
        all.push(...res.accounts);
        if (res.accounts.length === 0 || all.length >= res.total) break;
      }
      if (all.length === 0 && output !== 'json' && output !== 'yaml') ctx.io.stderr('No accounts found.\n');
      else ctx.io.stdout(formatAccounts(all, output));
      ctx.exit(ExitCode.OK);
    } catch (err) {
      reportReadError(ctx, err, opts.gateway);
    }
  });
}
