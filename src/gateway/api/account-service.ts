/**
 * `outpost.api.v1.AccountService` (all methods but ListAgents, which the agent-stream side serves): thin adapters
 * over {@link AccountAdmin}, the implementation the `/armory/accounts` REST routes share. Account errors become
 * INVALID_ARGUMENT / ALREADY_EXISTS / NOT_FOUND / FAILED_PRECONDITION; the caller's subject is the recorded actor.
 */
import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import type { AccountService } from '../../gen/outpost/api/v1/account_service_pb.js';
import { toAccountConnectError } from '../accounts/account-errors.js';
import { parseName, parseNames, parseSpecs, parseStateChangeMessages } from '../accounts/account-input.js';
import type { AccountAdmin } from '../account-admin/account-admin.js';
import { adminActor } from '../accounts/account-states.js';
import { principalOf } from '../auth/connect-auth.js';

type Impl = Omit<ServiceImpl<typeof AccountService>, 'listAgents'>;

/** Creates the AccountService methods (merge ListAgents in from the agent-stream side). */
export function createAccountService(admin: AccountAdmin): Impl {
  const actor = (context: HandlerContext) => adminActor(principalOf(context.values));
  const guard = async <T>(run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (err) {
      throw toAccountConnectError(err);
    }
  };
  return {
    listAccounts: (req) =>
      guard(async () => {
        if (req.name) parseName(req.name);
        const { accounts, total } = await admin.list({ name: req.name || undefined, page: req.page, limit: req.limit });
        return { accounts, total };
      }),
    getAccount: (req) => guard(() => admin.get(parseName(req.name))),
    createAccounts: (req, context) => guard(async () => ({ accounts: await admin.create(parseSpecs(req.accounts), actor(context)) })),
    setAccountStates: (req, context) =>
      guard(async () => ({ accounts: await admin.setStates(parseStateChangeMessages(req.accounts), actor(context)) })),
    putDynamicAccounts: (req, context) =>
      guard(async () => ({ accounts: await admin.putDynamic(parseSpecs(req.accounts), 'upsert', actor(context)) })),
    deleteAccounts: (req, context) => guard(async () => ({ deleted: await admin.delete(parseNames(req.names), actor(context)) })),
    releaseBinding: (req, context) => guard(async () => ({ account: await admin.releaseBinding(parseName(req.name), actor(context)) })),
    rebindAccount: (req, context) =>
      guard(async () => ({ account: await admin.rebind(parseName(req.name), req.identity, actor(context)) })),
  };
}
