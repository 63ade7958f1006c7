/**
 * `POST /kubernetes/ops?clientRequestId=…` and the deprecated `POST /ops`: Orca's array of single-key descriptions.
 * Everything that can be checked before running is checked first — the body, each operation name and description,
 * each account (known to the gateway, and allowed by `X-SPINNAKER-ACCOUNTS` when present) — and a failure is a 400 in
 * Spring's shape that creates nothing. Otherwise the answer is `{"id", "resourceUri": "/task/<id>"}` at once and the
 * task runs in the background; a repeated `clientRequestId` from the same caller returns the first task's id.
 */
import type { Context, Hono } from 'hono';
import type { RestEnv } from '../../auth/rest-auth.js';
import { identityOf, mayReach } from '../../auth/principal.js';
import { HttpError } from '../../http/errors.js';
import { readJsonBody } from '../../http/json-body.js';
import type { AccountLookup } from '../account-lookup.js';
import type { ClouddriverTasks } from '../clouddriver-tasks.js';
import { badDescription } from '../ops/description-fields.js';
import { parseOperationsBody, prepareOperation, type PrepareDeps } from '../ops/operation-registry.js';
import { accountRefusal, spinnakerContextOf } from '../spinnaker-headers.js';
import type { PreparedOperation } from '../task-runner.js';
import type { AuditLog } from '../../audit/audit-log.js';
import { recordOpsSubmission, type AuditedDescription } from '../ops-audit.js';
import type { SpinnakerAccess } from '../spinnaker-access.js';

/** What the routes need. */
export interface OpsRoutesDeps {
  tasks: ClouddriverTasks;
  accounts: AccountLookup;
  prepare: PrepareDeps;
  maxBodyBytes: number;
  /** Fiat's check of the user (WRITE on every description's account); allows everything without Fiat. */
  access: SpinnakerAccess;
  /** Where every submission, accepted or refused, is recorded; none when absent. */
  audit?: Pick<AuditLog, 'record'>;
}

/** Largest `clientRequestId` accepted (Orca sends a 64-character sha256). */
const MAX_REQUEST_ID = 256;

/** Adds the submission routes. */
export function addOpsRoutes(app: Hono<RestEnv>, deps: OpsRoutesDeps): void {
  for (const path of ['/ops', '/:cloudProvider/ops']) {
    app.post(path, async (c) => {
      const startedAt = new Date();
      const principal = c.get('principal');
      const identity = principal ? identityOf(principal) : 'insecure:anonymous';
      let items: AuditedDescription[] = [];
      try {
        const id = await submit(c, deps, identity, (read) => {
          items = read;
        });
        if (deps.audit)
          recordOpsSubmission(deps.audit, items, { principal: identity, groups: principal?.groups, startedAt, operationId: id });
        return c.json({ id, resourceUri: `/task/${id}` });
      } catch (err) {
        if (deps.audit)
          recordOpsSubmission(deps.audit, items, {
            principal: identity,
            groups: principal?.groups,
            startedAt,
            operationId: '',
            error: err,
          });
        throw err;
      }
    });
  }
  for (const path of ['/ops', '/:cloudProvider/ops']) {
    app.all(path, (c) => {
      c.header('Allow', 'POST');
      throw new HttpError(405, 'Method Not Allowed', `${c.req.method} is not allowed on ${c.req.path}`);
    });
  }
}

/** Checks and stores one submission; returns its task id. `onRead` gets the descriptions once the body is read. */
async function submit(
  c: Context<RestEnv>,
  deps: OpsRoutesDeps,
  principal: string,
  onRead: (items: AuditedDescription[]) => void,
): Promise<string> {
  const provider = c.req.param('cloudProvider');
  if (provider !== undefined && provider !== 'kubernetes')
    throw badDescription(`cloud provider ${JSON.stringify(provider)} is not served here: Outpost serves kubernetes`);
  const clientRequestId = c.req.query('clientRequestId') || undefined;
  if (clientRequestId !== undefined && clientRequestId.length > MAX_REQUEST_ID)
    throw badDescription(`clientRequestId is longer than ${MAX_REQUEST_ID} characters`);
  const context = spinnakerContextOf(c);
  const items = parseOperationsBody(await readJsonBody(c, deps.maxBodyBytes));
  onRead(items);
  const operations: PreparedOperation[] = items.map(({ name, description }) => prepareOperation(name, description, deps.prepare));
  for (const op of operations) {
    // Refused before the account is looked up: a caller learns nothing of accounts it may not reach.
    const refusal = accountRefusal(context, op.account);
    if (refusal) throw badDescription(refusal);
    // Clouddriver's DescriptionAuthorizer: WRITE on the account, refused as a validation error (400, which Orca does
    // not retry). Kubernetes descriptions name no application Clouddriver checks. Fiat not answering: 503.
    const verdict = await deps.access.fiatVerdict(context, [{ type: 'ACCOUNT', name: op.account, authorization: 'WRITE' }]);
    if (!verdict.allowed)
      throw verdict.status === 403 ? badDescription(verdict.message) : new HttpError(503, 'Service Unavailable', verdict.message);
    if (!(await deps.accounts.exists(op.account)))
      throw badDescription(`account ${JSON.stringify(op.account)} is not known to this gateway`);
  }
  const { id } = await deps.tasks.submit({ principal, clientRequestId, operations, context });
  return id;
}

/**
 * Adds `GET /task/{id}` and `GET /{cloudProvider}/task/{id}`: readable by a caller whose `spinnaker` rules reach every
 * account of the task and, with Fiat, by a user with READ on each of them (403; 503 when Fiat cannot answer). `X-SPINNAKER-ACCOUNTS` does not narrow it: the submission was already checked against it, and
 * Orca polls the task with whatever user context its polling thread has.
 */
export function addTaskRoutes(app: Hono<RestEnv>, tasks: ClouddriverTasks, access: SpinnakerAccess): void {
  for (const path of ['/task/:id', '/:cloudProvider/task/:id']) {
    app.get(path, async (c) => {
      const id = c.req.param('id') ?? '';
      const found = await tasks.find(id);
      if (!found) throw new HttpError(404, 'Not Found', `no task ${JSON.stringify(id)}`);
      // Readable only by a caller whose spinnaker rules reach every account the task touches (its history names them).
      const principal = spinnakerContextOf(c).principal;
      const unreachable = found.accounts.find((account) => !mayReach(principal, 'spinnaker', account));
      if (unreachable !== undefined) {
        throw new HttpError(
          403,
          'Forbidden',
          `${principal?.subject ?? 'the caller'} may not read task ${JSON.stringify(id)}: it touches account ` +
            `${JSON.stringify(unreachable)} (authorization.rules: the spinnaker role and its accounts)`,
        );
      }
      // With Fiat, also READ on each of those accounts for the user (Clouddriver does not check tasks; its results
      // carry the accounts' manifests, so Outpost reads them as reads of the accounts).
      const verdict = await access.fiatVerdict(
        spinnakerContextOf(c),
        found.accounts.map((name) => ({ type: 'ACCOUNT' as const, name, authorization: 'READ' as const })),
      );
      if (!verdict.allowed)
        throw new HttpError(verdict.status, verdict.status === 403 ? 'Forbidden' : 'Service Unavailable', verdict.message);
      return c.json(found.view);
    });
  }
}
