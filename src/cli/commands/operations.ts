/**
 * `outpost operations [ID] [--watch] [--account A] [--state S] [-o wide|json|yaml|name]`: the operations the gateway
 * recorded (OperationService), newest first, or one in detail. `ID --watch` follows it (WaitOperation), printing a
 * row each time its state changes, and exits by its outcome: 0 succeeded, 1 failed or timed out.
 */
import { InvalidArgumentError, Option, type Command } from 'commander';
import { fail, resolveDeps, type ClientCommandDeps, type ClientContext } from '../../client/client-command.js';
import { CliError, ExitCode } from '../../client/errors.js';
import { describeFailure, succeeded } from '../../client/format.js';
import { createOperationClient, isTerminal, type OperationClient } from '../../client/operation-client.js';
import { describeOperation, formatOperations, type OperationOutput } from '../../client/operation-format.js';
import { configureReadCommand, openReadGateway, reportReadError, type ReadOptions } from '../../client/read-command.js';
import { OperationState, type OperationRecord } from '../../gen/outpost/api/v1/operation_service_pb.js';

const STATES: Record<string, OperationState> = {
  pending: OperationState.PENDING,
  sent: OperationState.SENT,
  succeeded: OperationState.SUCCEEDED,
  failed: OperationState.FAILED,
  timed_out: OperationState.TIMED_OUT,
};

/** Largest `--limit`: the gateway's largest page of operations. */
const MAX_LIMIT = 1000;

function parseLimit(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > MAX_LIMIT) throw new InvalidArgumentError(`must be an integer from 1 to ${MAX_LIMIT}`);
  return n;
}

interface OperationsOptions extends ReadOptions {
  watch?: boolean;
  account?: string;
  state?: string;
  limit: number;
}

/** Registers `operations`. */
export function registerOperationsCommand(program: Command, deps?: ClientCommandDeps): void {
  const ctx = resolveDeps(deps);
  const cmd = program
    .command('operations')
    .description('list recent operations (newest first) or show one; --watch follows one until it ends and exits by its outcome')
    .argument('[id]', 'one operation to show')
    .option('-w, --watch', 'with an ID: follow the operation until it ends (exit 0 succeeded, 1 failed or timed out)')
    .option('--account <name>', 'only operations of this account')
    .addOption(new Option('--state <state>', 'only operations in this state').choices(Object.keys(STATES)))
    .option('--limit <n>', `how many operations to list (1–${MAX_LIMIT})`, parseLimit, 50);
  configureReadCommand(cmd, ctx, ['wide', 'json', 'yaml', 'name']).action(async (id: string | undefined, opts: OperationsOptions) => {
    const output = (opts.output ?? 'table') as OperationOutput;
    if (opts.watch && !id) {
      fail(ctx, ExitCode.USAGE, '--watch follows one operation: outpost operations ID --watch');
      return;
    }
    if (id && (opts.account || opts.state)) {
      fail(ctx, ExitCode.USAGE, '--account and --state filter a listing; they do not apply with an ID');
      return;
    }
    try {
      const client = createOperationClient(await openReadGateway(ctx, opts));
      if (id && opts.watch) {
        await watchOperation(ctx, client, id, output);
        return;
      }
      if (id) {
        const record = await getOperation(client, id);
        ctx.io.stdout(output === 'table' ? describeOperation(record) : formatOperations([record], output, { single: true }));
        ctx.exit(ExitCode.OK);
        return;
      }
      const page = await client.raw.listOperations(
        { account: opts.account ?? '', state: opts.state ? STATES[opts.state] : OperationState.UNSPECIFIED, pageSize: opts.limit },
        { timeoutMs: 30_000 },
      );
      if (page.operations.length === 0 && output !== 'json' && output !== 'yaml') ctx.io.stderr('No operations found.\n');
      else ctx.io.stdout(formatOperations(page.operations, output));
      ctx.exit(ExitCode.OK);
    } catch (err) {
      reportReadError(ctx, err, opts.gateway);
    }
  });
}

async function getOperation(client: OperationClient, id: string): Promise<OperationRecord> {
  const { operation } = await client.raw.getOperation({ id }, { timeoutMs: 30_000 });
  if (!operation) throw new CliError(`the gateway answered without operation ${id}`, ExitCode.FAILED);
  return operation;
}

/**
 * Follows one operation: a table row (or JSON/YAML document, or name) per state change; the gateway ends the stream
 * at the operation's deadline at the latest. Exit 0 when it succeeded, 1 with the failure line otherwise.
 */
async function watchOperation(ctx: ClientContext, client: OperationClient, id: string, output: OperationOutput): Promise<void> {
  let last: OperationRecord | undefined;
  let printed = 0;
  const print = (record: OperationRecord) => {
    if (output === 'table' || output === 'wide') {
      const table = formatOperations([record], output);
      ctx.io.stdout(printed === 0 ? table : table.slice(table.indexOf('\n') + 1));
    } else if (output === 'yaml') {
      ctx.io.stdout(`${printed === 0 ? '' : '---\n'}${formatOperations([record], output, { single: true })}`);
    } else if (output === 'json' || printed === 0) {
      ctx.io.stdout(formatOperations([record], output, { single: true }));
    }
    printed++;
  };
  for await (const msg of client.raw.waitOperation({ id })) {
    const record = msg.operation;
    if (!record) continue;
    if (!last || last.state !== record.state) print(record);
    last = record;
    if (isTerminal(record.state)) break;
  }
  if (!last || !isTerminal(last.state)) {
    const again = await getOperation(client, id);
    if (!isTerminal(again.state))
      throw new CliError(`operation ${id} is still ${OperationState[again.state]} after the wait ended`, ExitCode.FAILED);
    if (!last || last.state !== again.state) print(again);
    last = again;
  }
  if (succeeded(last)) ctx.exit(ExitCode.OK);
  else fail(ctx, ExitCode.FAILED, describeFailure(last));
}
