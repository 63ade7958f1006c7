/**
 * Test doubles for the operation commands: a fake OperationService on a real HTTP/1.1 socket (records every request,
 * answers what the test says) and an in-process runner that returns exit code, stdout and stderr.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { create, type MessageInitShape } from '@bufbuild/protobuf';
import { connectNodeAdapter } from '@connectrpc/connect-node';
import { OperationResultSchema } from '../../src/gen/outpost/agent/v1/operation_pb.js';
import {
  OperationRecordSchema,
  OperationService,
  OperationState,
  type OperationRecord,
  type SubmitOperationRequest,
} from '../../src/gen/outpost/api/v1/operation_service_pb.js';
import { AccountService } from '../../src/gen/outpost/api/v1/account_service_pb.js';
import { type CliRun, runInProcess } from './captured-io.js';
import { registerAccountsCommand } from '../../src/cli/commands/accounts.js';
import { registerOperationsCommand } from '../../src/cli/commands/operations.js';
import { registerApplyCommand } from '../../src/cli/commands/apply.js';
import { registerDeleteCommand } from '../../src/cli/commands/delete.js';
import { registerGetCommand } from '../../src/cli/commands/get.js';
import { registerLogsCommand } from '../../src/cli/commands/logs.js';
import { registerPatchCommand } from '../../src/cli/commands/patch.js';
import { registerRolloutCommand } from '../../src/cli/commands/rollout.js';
import { registerScaleCommand } from '../../src/cli/commands/scale.js';

/** What the fake answers to one submit: a record, or a thrown error (ConnectError). */
type Responder = (req: SubmitOperationRequest) => OperationRecord | Promise<OperationRecord>;

/** A fake gateway. */
export interface FakeGateway {
  readonly url: string;
  readonly requests: SubmitOperationRequest[];
  /** Ids passed to WaitOperation. */
  readonly waits: string[];
  respond: Responder;
  /** What WaitOperation streams for an id (default: nothing). */
  waitStream: (id: string) => OperationRecord[];
  /** The account names ListAccounts answers (default: none, so a command without --account exits 2). */
  accounts: string[];
  close(): Promise<void>;
}

/** A terminal SUCCEEDED record with the given result fields. */
export function succeededRecord(req: SubmitOperationRequest, result: MessageInitShape<typeof OperationResultSchema> = {}): OperationRecord {
  return create(OperationRecordSchema, {
    id: req.id || 'op-1',
    account: req.account,
    state: OperationState.SUCCEEDED,
    result: create(OperationResultSchema, { success: true, statusCode: 200, ...result }),
  });
}

/** A terminal record in `state` with an optional agent result. */
export function failedRecord(
  req: SubmitOperationRequest,
  state: OperationState,
  result?: MessageInitShape<typeof OperationResultSchema>,
  error = '',
): OperationRecord {
  return create(OperationRecordSchema, {
    id: req.id || 'op-1',
    account: req.account,
    state,
    error,
    result: result ? create(OperationResultSchema, { success: false, ...result }) : undefined,
  });
}

/** Starts the fake on 127.0.0.1:0. */
export async function startFakeGateway(): Promise<FakeGateway> {
  const fake: Omit<FakeGateway, 'url' | 'close'> = {
    requests: [],
    waits: [],
    respond: (req) => succeededRecord(req),
    waitStream: () => [],
    accounts: [],
  };
  const handler = connectNodeAdapter({
    routes: (router) =>
      router
        .service(AccountService, {
          async listAccounts() {
            return { accounts: fake.accounts.map((name) => ({ name })), total: fake.accounts.length };
          },
        })
        .service(OperationService, {
          async submitOperation(req) {
            fake.requests.push(req);
            return { operation: await fake.respond(req) };
          },
          async getOperation(req) {
            const records = fake.waitStream(req.id);
            return { operation: records[records.length - 1] };
          },
          async *waitOperation(req) {
            fake.waits.push(req.id);
            for (const operation of fake.waitStream(req.id)) yield { operation };
          },
          async listOperations() {
            return { operations: [] };
          },
        }),
  });
  const server: Server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(fake, {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  }) as FakeGateway;
}

export type { CliRun } from './captured-io.js';

/** Runs `outpost ARGS…` in-process with only the client commands (operations, accounts, operations list) registered. */
export function runCli(args: string[], options: { stdin?: string; env?: NodeJS.ProcessEnv } = {}): Promise<CliRun> {
  return runInProcess(
    [
      registerApplyCommand,
      registerDeleteCommand,
      registerScaleCommand,
      registerRolloutCommand,
      registerGetCommand,
      registerLogsCommand,
      registerPatchCommand,
      registerAccountsCommand,
      registerOperationsCommand,
    ],
    args,
    { env: options.env ?? {} },
    options.stdin ?? '',
  );
}
