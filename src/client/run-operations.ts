/**
 * Several operations from one command line (`delete deploy a b c`, `delete -f FILE`): submitted one after another,
 * each reported as `runOperation` reports it, and the command's exit code the worst of theirs — as kubectl carries on
 * past an object that failed and exits 1 at the end.
 */
import { fail, openGateway, runOperation, type ClientContext, type ClientOptions, type OpenedGateway } from './client-command.js';
import { describeClientError, ExitCode } from './errors.js';
import type { SubmitInit } from './operation-client.js';
import type { OperationRecord } from '../gen/outpost/api/v1/operation_service_pb.js';

/** One operation of the batch and how to print its result. */
export interface BatchItem {
  spec: SubmitInit['spec'];
  render: (record: OperationRecord) => { stdout: string; stderr?: string } | string;
}

/**
 * Runs `items` in order on one gateway connection (credentials and account resolved once) and reports the highest
 * exit code once at the end. Stops early when the gateway cannot be
 * reached (every later item would fail the same way). The caller must refuse `--id` for more than one item: one
 * client-chosen id names one operation.
 */
export async function runOperations(ctx: ClientContext, options: ClientOptions, items: BatchItem[]): Promise<void> {
  let opened: OpenedGateway;
  try {
    opened = await openGateway(ctx, options);
  } catch (err) {
    const { exitCode, message } = describeClientError(err, options.gateway);
    fail(ctx, exitCode, message);
    return;
  }
  const state = { worst: ExitCode.OK as ExitCode };
  const inner: ClientContext = { ...ctx, exit: (code) => void (state.worst = Math.max(state.worst, code) as ExitCode) };
  for (const item of items) {
    await runOperation(inner, options, item.spec, item.render, opened);
    if (state.worst === ExitCode.UNREACHABLE) break;
  }
  ctx.exit(state.worst);
}
