/**
 * Account management: the one implementation behind both the AccountService RPCs and the `/armory/accounts` REST
 * routes. Every multi-account change is validated first and runs in one transaction (all or nothing), records each
 * state change in `account_transitions` with the admin as actor, and only after the commit pushes ADD/REMOVE
 * commands to the agent streams of the account's zone through the {@link AccountCommandBus}.
 */
import { create } from '@bufbuild/protobuf';
import type { Database } from '../../db/database.js';
import { removeAccountCaches } from '../cache/cache-removal.js';
import { bumpObjectsVersions } from '../accounts/objects-version-queries.js';
import {
  AccountAction,
  AccountCommandSchema,
  AccountDefinitionSchema,
  type AccountDefinition,
} from '../../gen/outpost/agent/v1/agent_pb.js';
import type { Account, AccountTransition } from '../../gen/outpost/api/v1/account_service_pb.js';
import type { Logger } from '../../shared/logger.js';
import type { AccountCommandBus } from '../agents/account-commands.js';
import { AccountAdminError } from '../accounts/account-errors.js';
import { definitionFromJson, definitionToJson, type AccountInput, type StateChange } from '../accounts/account-input.js';
import {
  applyAdminChange,
  clearClusterBinding,
  deleteAccountRows,
  insertDynamicAccounts,
  lockAccountRows,
  setAccountState,
  type AccountRow,
} from '../accounts/account-repository.js';
import { NEW_ACCOUNT, STREAMED_STATES, recordTransitions, type AccountState, type Transition } from '../accounts/account-states.js';
import { parseIdentity, rebindAccount } from './account-rebind.js';
import { accountExists, listAccountNames } from '../accounts/account-reads.js';
import { accountViews, getAccountView, listAccountViews, type AccountPage } from './account-view.js';

/** Limits of the account routes (`config.accounts`). */
interface AccountLimits {
  activationTimeoutSeconds: number;
  maxBodyBytes: number;
  maxPageSize: number;
}

/** What account management needs. */
export interface AccountAdminDeps {
  database: Database;
  /** Reaches the agent streams of this replica. */
  bus: AccountCommandBus;
  limits: AccountLimits;
  /**
   * Agent session rows untouched for this long count as ended (`staleAfterSeconds` in agent-session-store): accounts
   * show the transport of their caching stream only while its row is live.
   */
  sessionStaleAfterSeconds: number;
  logger: Logger;
}

/** How PutDynamicAccounts treats existing names: POST creates only, PATCH updates only, PUT does either. */
type DynamicMode = 'create' | 'update' | 'upsert';

/** Account management operations; `actor` is recorded with every transition (`admin:<subject>`). */
export interface AccountAdmin {
  readonly limits: AccountLimits;
  list(query: { name?: string; page?: number; limit?: number }): Promise<AccountPage & { page: number; limit: number }>;
  /** NOT_FOUND when unknown. */
  get(name: string): Promise<{ account: Account; transitions: AccountTransition[] }>;
  /** Every account's name, sorted (cheap: no view is built). */
  names(): Promise<string[]>;
  /** Whether the account exists (cheap: no view is built). */
  exists(name: string): Promise<boolean>;
  /** Defines accounts, INACTIVE, nothing pushed. Conflict (listing them) when any name exists. */
  create(inputs: AccountInput[], actor: string): Promise<Account[]>;
  /** Activates or deactivates accounts (moving dynamic ones to a new zone first). Not found lists unknown names. */
  setStates(changes: StateChange[], actor: string): Promise<Account[]>;
  /** Creates and/or updates dynamic accounts and activates them. */
  putDynamic(inputs: AccountInput[], mode: DynamicMode, actor: string): Promise<Account[]>;
  /** Removes accounts with their cache, watch state and binding. Returns the names deleted. */
  delete(names: string[], actor: string): Promise<string[]>;
  /** Forgets the cluster the name is bound to and that cluster's cache. Precondition while an agent streams it. */
  releaseBinding(name: string, actor: string): Promise<Account>;
  /**
   * Binds the name to another agent identity (`identity` as given: validated here), ending a live lease of the old
   * one (see account-rebind.ts). Invalid / not found / precondition; nothing changes then.
   */
  rebind(name: string, identity: unknown, actor: string): Promise<Account>;
}

type Push = { zone: string; action: AccountAction; definition: AccountDefinition };

/** Creates the account management implementation. */
export function createAccountAdmin(deps: AccountAdminDeps): AccountAdmin {
  const { db } = deps.database;
  const log = deps.logger;
  const viewOptions = { staleAfterSeconds: deps.sessionStaleAfterSeconds };

  const push = (pushes: Push[]) => {
    for (const p of pushes) {
      const account = p.action === AccountAction.REMOVE ? { name: p.definition.name } : p.definition;
      const told = deps.bus.push(p.zone, create(AccountCommandSchema, { action: p.action, account }));
      log.info({ account: p.definition.name, zone: p.zone, action: AccountAction[p.action], streams: told }, 'account command pushed');
    }
  };

  const requireAll = (rows: Map<string, AccountRow>, names: string[]) => {
    const unknown = names.filter((n) => !rows.has(n));
    if (unknown.length > 0)
      throw new AccountAdminError('not_found', `unknown account${plural(unknown)} ${quote(unknown)}; nothing was changed`, unknown);
  };

  const requireDynamic = (row: AccountRow, what: string) => {
    if (row.source !== 'dynamic') {
      throw new AccountAdminError(
        'precondition',
        `account ${row.name} is declared in the configuration of agent ${row.agentId || '(unknown)'}; ${what} there`,
        [row.name],
      );
    }
  };

  /**
   * Moves one dynamic account (desired ACTIVE, definition and zone already written) towards ACTIVE: ACTIVATING with
   * an ADD to its zone, TO_MIGRATE first when it was served in another zone, ADD again when only its definition
   * changed while ACTIVE.
   */
  const activateDynamic = (
    row: AccountRow,
    definition: AccountDefinition,
    zone: string,
    actor: string,
    t: Transition[],
    p: Push[],
  ): AccountState => {
    const state = row.state as AccountState;
    const active = STREAMED_STATES.includes(state) || state === 'ACTIVATING';
    if (active && row.zoneId !== zone) {
      t.push({ account: row.name, from: state, to: 'TO_MIGRATE', reason: `zone ${show(row.zoneId)} → ${show(zone)}`, actor });
      p.push({ zone: row.zoneId, action: AccountAction.REMOVE, definition });
      t.push({ account: row.name, from: 'TO_MIGRATE', to: 'ACTIVATING', reason: `pushed to agents of zone ${show(zone)}`, actor });
      p.push({ zone, action: AccountAction.ADD, definition });
      return 'ACTIVATING';
    }
    p.push({ zone, action: AccountAction.ADD, definition });
    if (state === 'ACTIVE') return 'ACTIVE';
    t.push({ account: row.name, from: state, to: 'ACTIVATING', reason: `pushed to agents of zone ${show(zone)}`, actor });
    return 'ACTIVATING';
  };

  return {
    limits: deps.limits,

    async list(query) {
      const page = query.page || 1;
      const limit = query.limit ?? 0;
      if (page < 1 || !Number.isInteger(page)) throw new AccountAdminError('invalid', `page must be a positive integer (got ${page})`);
      if (limit < 0 || limit > deps.limits.maxPageSize || !Number.isInteger(limit)) {
        throw new AccountAdminError('invalid', `limit must be between 1 and ${deps.limits.maxPageSize} (got ${limit})`);
      }
      const effective = limit || deps.limits.maxPageSize;
      const result = await listAccountViews(db, { name: query.name, page, limit: effective }, viewOptions);
      return { ...result, page, limit: effective };
    },

    names() {
      return listAccountNames(db);
    },
    exists(name) {
      return accountExists(db, name);
    },

    async get(name) {
      const view = await getAccountView(db, name, viewOptions);
      if (!view) throw new AccountAdminError('not_found', `unknown account ${JSON.stringify(name)}`, [name]);
      return view;
    },

    async create(inputs, actor) {
      const names = inputs.map((i) => i.definition.name);
      await db.transaction(async (tx) => {
        const existing = await lockAccountRows(tx, names);
        refuseExisting(names, existing);
        await insertDynamicAccounts(tx, inputs, 'INACTIVE');
        await recordTransitions(
          tx,
          names.map((n) => ({ account: n, from: NEW_ACCOUNT, to: 'INACTIVE' as const, reason: 'defined', actor })),
        );
      });
      return accountViews(db, names, viewOptions);
    },

    async putDynamic(inputs, mode, actor) {
      const names = inputs.map((i) => i.definition.name);
      const pushes: Push[] = [];
      await db.transaction(async (tx) => {
        const existing = await lockAccountRows(tx, names);
        if (mode === 'create') refuseExisting(names, existing);
        if (mode === 'update') requireAll(existing, names);
        for (const row of existing.values()) requireDynamic(row, 'change it');
        const transitions: Transition[] = [];
        const fresh = inputs.filter((i) => !existing.has(i.definition.name));
        if (fresh.length > 0) {
          await insertDynamicAccounts(tx, fresh, 'ACTIVATING');
          for (const i of fresh) {
            transitions.push({
              account: i.definition.name,
              from: NEW_ACCOUNT,
              to: 'ACTIVATING',
              reason: `pushed to agents of zone ${show(i.zoneId)}`,
              actor,
            });
            pushes.push({ zone: i.zoneId, action: AccountAction.ADD, definition: i.definition });
          }
        }
        for (const input of inputs) {
          const row = existing.get(input.definition.name);
          if (!row) continue;
          const state = activateDynamic(row, input.definition, input.zoneId, actor, transitions, pushes);
          await applyAdminChange(tx, row.name, {
            definition: definitionToJson(input.definition),
            zoneId: input.zoneId,
            desiredState: 'ACTIVE',
            state,
            reason: state === row.state ? row.reason : '',
          });
        }
        await recordTransitions(tx, transitions);
      });
      push(pushes);
      return accountViews(db, names, viewOptions);
    },

    async setStates(changes, actor) {
      const names = changes.map((c) => c.name);
      const pushes: Push[] = [];
      await db.transaction(async (tx) => {
        const rows = await lockAccountRows(tx, names);
        requireAll(rows, names);
        for (const c of changes) if (c.zoneId !== undefined) requireDynamic(rows.get(c.name)!, 'its zone is set');
        const transitions: Transition[] = [];
        for (const change of changes) {
          const row = rows.get(change.name)!;
          const state = row.state as AccountState;
          if (state === 'DELETING' || state === 'DELETE_FAILED') {
            throw new AccountAdminError('precondition', `account ${row.name} is ${state}; delete it again or wait`, [row.name]);
          }
          const definition = definitionFromJson(row.definition);
          const zone = change.zoneId ?? row.zoneId;
          let next: AccountState = state;
          let reason = '';
          if (change.state === 'ACTIVE') {
            if (row.source === 'dynamic' && definition) {
              next = activateDynamic(row, definition, zone, actor, transitions, pushes);
            } else if (state === 'TO_DEACTIVATE') {
              next = 'ACTIVE';
              transitions.push({ account: row.name, from: state, to: next, reason: 'activated while its agent still streams it', actor });
            }
          } else if (row.source === 'dynamic') {
            const streamed = STREAMED_STATES.includes(state);
            next = streamed ? 'DEACTIVATING' : 'INACTIVE';
            transitions.push({
              account: row.name,
              from: state,
              to: next,
              reason: streamed ? 'told agents to stop serving it' : 'deactivated',
              actor,
            });
            if (state !== 'INACTIVE') {
              pushes.push({
                zone: row.zoneId,
                action: AccountAction.REMOVE,
                definition: definition ?? create(AccountDefinitionSchema, { name: row.name }),
              });
            }
          } else if (STREAMED_STATES.includes(state)) {
            next = 'TO_DEACTIVATE';
            reason = 'its agent serves it from its configuration: refused from its next registration on';
            transitions.push({ account: row.name, from: state, to: next, reason, actor });
          }
          await applyAdminChange(tx, row.name, {
            desiredState: change.state,
            zoneId: zone,
            state: next,
            reason: next === state ? row.reason : reason,
          });
        }
        await recordTransitions(tx, transitions);
      });
      push(pushes);
      return accountViews(db, names, viewOptions);
    },

    async delete(names, actor) {
      const pushes: Push[] = [];
      await db.transaction(async (tx) => {
        const rows = await lockAccountRows(tx, names);
        requireAll(rows, names);
        const streamed = [...rows.values()].filter((r) => r.source !== 'dynamic' && STREAMED_STATES.includes(r.state as AccountState));
        if (streamed.length > 0) {
          const list = streamed.map((r) => r.name);
          throw new AccountAdminError(
            'precondition',
            `account${plural(list)} ${quote(list)} ${list.length === 1 ? 'is' : 'are'} streamed by an agent from its configuration; remove ${list.length === 1 ? 'it' : 'them'} there or stop the agent first`,
            list,
          );
        }
        const transitions: Transition[] = [];
        for (const row of rows.values()) {
          await setAccountState(tx, row.name, 'DELETING', '');
          transitions.push({ account: row.name, from: row.state, to: 'DELETING', reason: 'deleted', actor });
          const definition = definitionFromJson(row.definition);
          if (row.source === 'dynamic' && definition) pushes.push({ zone: row.zoneId, action: AccountAction.REMOVE, definition });
        }
        await recordTransitions(tx, transitions);
      });
      push(pushes);
      try {
        await db.transaction(async (tx) => {
          await removeAccountCaches(tx, names);
          await deleteAccountRows(tx, names);
        });
      } catch (err) {
        log.error({ err, accounts: names }, 'could not delete accounts');
        // The cause (SQL, driver text) stays in the log; the recorded reason is what an admin can act on.
        const reason = "delete failed: the database did not remove the account's rows (details in the gateway log); delete it again";
        await db
          .transaction(async (tx) => {
            for (const name of names) await setAccountState(tx, name, 'DELETE_FAILED', reason);
            await recordTransitions(
              tx,
              names.map((n) => ({ account: n, from: 'DELETING', to: 'DELETE_FAILED' as const, reason, actor })),
            );
          })
          .catch((e: unknown) => log.error({ err: e }, 'could not record DELETE_FAILED'));
        throw err;
      }
      return names;
    },

    async releaseBinding(name, actor) {
      await db.transaction(async (tx) => {
        const rows = await lockAccountRows(tx, [name]);
        requireAll(rows, [name]);
        const row = rows.get(name)!;
        if (STREAMED_STATES.includes(row.state as AccountState)) {
          throw new AccountAdminError(
            'precondition',
            `account ${name} is ${row.state}, streamed by agent ${row.agentId}; stop that agent (or deactivate the account) before releasing its binding`,
            [name],
          );
        }
        await clearClusterBinding(tx, name);
        await removeAccountCaches(tx, [name]);
        await bumpObjectsVersions(tx, [name]);
      });
      log.info({ account: name, actor }, 'account binding released');
      return (await accountViews(db, [name], viewOptions))[0]!;
    },

    async rebind(name, identity, actor) {
      await rebindAccount(deps.database, name, parseIdentity(identity), actor, log);
      return (await accountViews(db, [name], viewOptions))[0]!;
    },
  };
}

/** Throws CONFLICT naming every one of `names` that already `existing` holds: creating them changes nothing. */
function refuseExisting(names: string[], existing: ReadonlySet<string> | ReadonlyMap<string, unknown>): void {
  const duplicates = names.filter((n) => existing.has(n));
  if (duplicates.length === 0) return;
  throw new AccountAdminError(
    'conflict',
    `account${plural(duplicates)} ${quote(duplicates)} already exist${duplicates.length === 1 ? 's' : ''}; nothing was created`,
    duplicates,
  );
}

function plural(names: string[]): string {
  return names.length === 1 ? '' : 's';
}

function quote(names: string[]): string {
  return names.map((n) => JSON.stringify(n)).join(', ');
}

function show(zone: string): string {
  return zone ? JSON.stringify(zone) : '(all zones)';
}
