/**
 * Owns the set of accounts the agent serves and every change to it: the config file's accounts (reloaded), the
 * gateway's dynamic accounts (AccountCommand), and the periodic re-preparation before a reconnect. Changes are
 * serialized; each one prepares the new accounts first, then swaps the set in one synchronous step and announces it
 * to the running session (one AccountsChanged), so a Hello always describes a consistent set and unaffected accounts
 * keep their watches.
 *
 * Rules: the config file wins over a command for the same name; a command never removes a config-file account; an
 * ADD for an existing dynamic account replaces it (remove + add), except that an identical ADD for an account already
 * CACHING or STANDBY is a no-op (the gateway re-sends its dynamic accounts after every Welcome); dynamic accounts live
 * as long as the process. Changes are prepared one at a time, so a slow cluster delays the changes queued after it.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Logger } from 'pino';
import { AccountAction, type AccountCommand } from '../../gen/outpost/agent/v1/agent_pb.js';
import type { AccountConfig } from '../config/schema.js';
import type { KubeRequestRecorder } from '../kube/kube-client.js';
import { stopAccountWatchers } from '../stream/account-watchers.js';
import type { SessionState } from '../stream/session.js';
import { accountConfigFromDefinition } from './account-definition.js';
import { createAccountRuntime, type AccountRuntime, type AccountSource } from './account-runtime.js';
import { dynamicKubeconfigRefusal } from './kubeconfig-path-policy.js';
import { failedAccount, prepareAccount } from './prepare-account.js';

/** A preparation older than this is redone before the next connection (new kinds, RBAC changes). */
const REPREPARE_AFTER_MS = 60_000;

/** Options of {@link createAccountManager}. */
export interface AccountManagerOptions {
  state: SessionState;
  /**
   * The states of the agent's other connections (`clouddriver.connections: 2`): they serve the same accounts, each
   * with runtimes of its own sharing the preparation; every change is applied and announced to them too.
   */
  mirrors?: SessionState[];
  logger: Logger;
  /** Aborts when the agent closes: preparations in progress stop. */
  signal: AbortSignal;
  /** Directory against which relative kubeconfig paths of dynamic accounts are resolved. */
  baseDir?: string;
  /** `kubernetes.dynamicKubeconfigDirs`: where dynamic accounts' kubeconfigs may lie (none when undefined). */
  kubeconfigDirs?: readonly string[];
  /** Told about every Kubernetes call of the accounts' clients (the agent's metrics). */
  kubeRecorder?: KubeRequestRecorder;
}

/** See the module comment. Every method is safe to call at any time; changes run one after the other. */
export interface AccountManager {
  /** Re-prepares accounts whose preparation failed or is stale (the connection loop calls it before each attempt). */
  refresh(): Promise<void>;
  /** Applies a new `kubernetes.accounts` list from the config file: stops removed/changed, adds new/changed. */
  setFileAccounts(accounts: AccountConfig[]): Promise<void>;
  /** Applies a gateway AccountCommand (invalid or forbidden commands are logged and ignored). */
  applyCommand(command: AccountCommand): Promise<void>;
  /** Resolves when no change is running or queued. */
  idle(): Promise<void>;
}

/** Creates the manager over `state.accounts` (which it mutates). */
export function createAccountManager(options: AccountManagerOptions): AccountManager {
  const { state, logger, signal } = options;
  let tail: Promise<void> = Promise.resolve();
  const serialize = (what: string, fn: () => Promise<void>): Promise<void> => {
    const run = tail.then(fn).catch((err: unknown) => logger.error({ err: (err as Error).message }, `${what} failed`));
    tail = run;
    return run;
  };
  const mirrors = options.mirrors ?? [];
  const find = (name: string) => state.accounts.find((a) => a.prepared.config.name === name);
  /** Every connection's runtime of the account `name` (the primary's first). */
  const runtimesOf = (name: string) => [state, ...mirrors].flatMap((s) => s.accounts.filter((a) => a.prepared.config.name === name));
  /** True while some connection's live session serves the account (its preparation is in use: not replaced then). */
  const inUse = (name: string) =>
    [state, ...mirrors].some(
      (s) =>
        s.live !== undefined &&
        s.accounts.some(
          (a) => a.prepared.config.name === name && (a.run !== undefined || a.verdict === 'caching' || a.verdict === 'standby'),
        ),
    );
  /**
   * Prepares an account; a dynamic one whose kubeconfig lies outside the allowed directories fails with the reason
   * instead, without its file being read (it is reported to the gateway like any account that cannot be reached).
   */
  const prepareWithin = (config: AccountConfig, source: AccountSource) => {
    const refusal =
      source === 'dynamic' && config.kubeconfigFile !== undefined
        ? dynamicKubeconfigRefusal(config.kubeconfigFile, options.kubeconfigDirs)
        : undefined;
    if (refusal === undefined) return prepareAccount(config, logger, signal, options.kubeRecorder);
    logger.error({ account: config.name }, `dynamic account "${config.name}" refused: ${refusal}`);
    return Promise.resolve(failedAccount(config, refusal));
  };

  /** Prepares `add`, swaps the set, announces, then waits for the removed watchers and closes their clients. */
  async function change(removed: AccountRuntime[], add: Array<{ config: AccountConfig; source: AccountSource }>): Promise<void> {
    const prepared = await Promise.all(add.map((a) => prepareWithin(a.config, a.source)));
    if (signal.aborted) {
      for (const p of prepared) p.client?.close();
      return;
    }
    const swap = (target: SessionState, gone: AccountRuntime[]) => {
      const added = prepared.map((p, i) => createAccountRuntime(p, add[i]!.source));
      target.accounts = [...target.accounts.filter((a) => !gone.includes(a)), ...added];
      const live = target.live;
      return live ? live.announce(gone, added) : Promise.all(gone.map((a) => stopAccountWatchers(a)));
    };
    const removedNames = new Set(removed.map((r) => r.prepared.config.name));
    const stopped = [
      swap(state, removed),
      ...mirrors.map((m) =>
        swap(
          m,
          m.accounts.filter((a) => removedNames.has(a.prepared.config.name)),
        ),
      ),
    ];
    await Promise.all(stopped);
    for (const account of removed) account.prepared.client?.close();
  }

  return {
    refresh: () =>
      serialize('preparing the accounts', async () => {
        await Promise.all(
          state.accounts.map(async (account) => {
            const p = account.prepared;
            if (p.preparedAt > 0 && p.error === '' && Date.now() - p.preparedAt < REPREPARE_AFTER_MS) return;
            // Served by another connection right now: its clients stay (re-prepared once no session uses them).
            if (p.preparedAt > 0 && inUse(p.config.name)) return;
            const fresh = await prepareWithin(p.config, account.source);
            if (p.client !== fresh.client) p.client?.close();
            for (const runtime of runtimesOf(p.config.name)) if (runtime.prepared === p) runtime.prepared = fresh;
          }),
        );
      }),

    setFileAccounts: (accounts) =>
      serialize('reloading the accounts', async () => {
        const wanted = new Map(accounts.map((a) => [a.name, a]));
        const removed: AccountRuntime[] = [];
        const add: Array<{ config: AccountConfig; source: AccountSource }> = [];
        for (const account of state.accounts) {
          const name = account.prepared.config.name;
          const next = wanted.get(name);
          if (account.source === 'dynamic') {
            if (next !== undefined) {
              logger.warn(
                { account: name },
                `the config file now defines account "${name}"; it replaces the dynamic account of that name (the file wins)`,
              );
              removed.push(account);
            }
          } else if (next === undefined || !isDeepStrictEqual(next, account.prepared.config)) {
            removed.push(account);
          }
        }
        for (const config of accounts) {
          const current = find(config.name);
          if (current === undefined || removed.includes(current)) add.push({ config, source: 'file' });
        }
        if (removed.length === 0 && add.length === 0) {
          logger.info('configuration file reloaded: accounts unchanged');
          return;
        }
        const addedNames = new Set(add.map((a) => a.config.name));
        logger.info(
          {
            added: [...addedNames].filter((n) => !removed.some((r) => r.prepared.config.name === n)),
            removed: removed.map((r) => r.prepared.config.name).filter((n) => !addedNames.has(n)),
            changed: removed.map((r) => r.prepared.config.name).filter((n) => addedNames.has(n)),
          },
          'configuration file reloaded: applying account changes',
        );
        await change(removed, add);
      }),

    applyCommand: (command) =>
      serialize('applying an account command', async () => {
        const definition = command.account;
        const name = definition?.name ?? '';
        const log = logger.child({ account: name || undefined });
        if (definition === undefined || name === '') {
          log.warn({ action: AccountAction[command.action] }, 'ignoring an account command without an account name');
          return;
        }
        const existing = find(name);
        if (command.action === AccountAction.REMOVE) {
          if (existing === undefined) log.warn(`ignoring REMOVE of account "${name}": this agent does not serve it`);
          else if (existing.source === 'file')
            log.warn(`ignoring REMOVE of account "${name}": it is defined in the config file, which only a file change can remove`);
          else {
            log.info(`removing dynamic account "${name}" (gateway command)`);
            await change([existing], []);
          }
          return;
        }
        if (command.action !== AccountAction.ADD) {
          log.warn({ action: command.action }, 'ignoring an account command with an unknown action');
          return;
        }
        const parsed = accountConfigFromDefinition(definition, options.baseDir);
        if (parsed.issues !== undefined) {
          const problems = parsed.issues.map((i) => `${i.path || '(account)'}: ${i.message}`).join('; ');
          log.error({ issues: parsed.issues }, `refusing to add account "${name}" from a gateway command: invalid definition: ${problems}`);
          return;
        }
        if (existing?.source === 'file') {
          log.warn(`ignoring ADD of account "${name}": the config file defines an account of that name (the file wins)`);
          return;
        }
        if (
          existing !== undefined &&
          isDeepStrictEqual(existing.prepared.config, parsed.config) &&
          runtimesOf(name).some((r) => r.verdict === 'caching' || r.verdict === 'standby')
        ) {
          log.info(`dynamic account "${name}" is already served with this definition`);
          return;
        }
        log.info(`${existing ? 'replacing' : 'adding'} dynamic account "${name}" (gateway command)`);
        await change(existing ? [existing] : [], [{ config: parsed.config, source: 'dynamic' }]);
      }),

    idle: async () => {
      let seen: Promise<void>;
      do {
        seen = tail;
        await seen;
      } while (seen !== tail);
    },
  };
}
