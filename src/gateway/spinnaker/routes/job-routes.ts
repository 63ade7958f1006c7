/**
 * Run Job's reads and cancel (Orca's WaitOnJobCompletion and job cancellation):
 * `GET /applications/{app}/jobs/{account}/{location}/{name}` — the job's state (job-status.ts), read live;
 * `GET …/{name}/{fileName}` — the properties printed in the log of container `fileName` of the job's most recent pod
 * (property-file.ts); `DELETE …/{name}` — deletes the job and its pods. `name` is "job NAME" or a bare job name.
 * With Fiat, as Clouddriver's JobController: the reads need application READ and account READ, the cancel
 * application EXECUTE and account WRITE (403; 503 when Fiat cannot answer).
 */
import { create } from '@bufbuild/protobuf';
import type { Hono, Context } from 'hono';
import { DeleteSpecSchema, PropagationPolicy } from '../../../gen/outpost/agent/v1/operation_pb.js';
import type { RestEnv } from '../../auth/rest-auth.js';
import { HttpError } from '../../http/errors.js';
import type { OperationManager } from '../../operations/operation-manager.js';
import type { AccountLookup } from '../account-lookup.js';
import { AgentCallError, createAgentCalls } from '../agent-calls.js';
import { parseResourceName } from '../../status/kind-names.js';
import { jobStatusView } from '../job-status.js';
import type { LiveReads } from '../live-reads.js';
import { PropertyFileError, parsePropertyFile } from '../property-file.js';
import type { SpinnakerAccess } from '../spinnaker-access.js';
import { mayTouchAccount, requesterOfRequest, spinnakerContextOf } from '../spinnaker-headers.js';
import { randomUUID } from 'node:crypto';

/** What the routes need. */
export interface JobRoutesDeps {
  accounts: AccountLookup;
  /** Reads on behalf of a requester (requesterOf). */
  /** The reads of one request, as its caller (never stored: live-reads.ts). */
  reads(c: Context<RestEnv>): LiveReads;
  operations: Pick<OperationManager, 'submit'>;
  access: SpinnakerAccess;
}

const BASE = '/applications/:app/jobs/:account/:location/:name';

/** Adds the routes. */
export function addJobRoutes(app: Hono<RestEnv>, deps: JobRoutesDeps): void {
  /** The account, namespace and job name of a request; 404 for an unknown account or a name that is not a job. */
  const target = async (c: Context<RestEnv>) => {
    const account = c.req.param('account') ?? '';
    const context = spinnakerContextOf(c);
    if (!mayTouchAccount(context, account)) throw new HttpError(404, 'Not Found', `no account named ${JSON.stringify(account)}`);
    const cancel = c.req.method === 'DELETE';
    const verdict = await deps.access.fiatVerdict(context, [
      { type: 'APPLICATION', name: c.req.param('app') ?? '', authorization: cancel ? 'EXECUTE' : 'READ' },
      { type: 'ACCOUNT', name: account, authorization: cancel ? 'WRITE' : 'READ' },
    ]);
    if (!verdict.allowed)
      throw new HttpError(verdict.status, verdict.status === 403 ? 'Forbidden' : 'Service Unavailable', verdict.message);
    if (!(await deps.accounts.exists(account))) throw new HttpError(404, 'Not Found', `no account named ${JSON.stringify(account)}`);
    const raw = c.req.param('name') ?? '';
    const parsed = raw.includes(' ') ? parseResourceName(raw) : undefined;
    if (raw.includes(' ') && parsed?.kind.registered?.name !== 'job')
      throw new HttpError(404, 'Not Found', `${JSON.stringify(raw)} does not name a job ("job NAME")`);
    const location = c.req.param('location') ?? '';
    return { account, namespace: location === '_' ? '' : location, name: parsed?.name ?? raw };
  };
  const jobAndPods = async (c: Context<RestEnv>) => {
    const t = await target(c);
    const reads = deps.reads(c);
    const job = await reads.get(t.account, 'Job', t.namespace, t.name);
    if (!job) throw new HttpError(404, 'Not Found', `job ${t.name} not found in ${t.namespace} of account ${t.account}`);
    const pods = await reads.list(t.account, 'Pod', t.namespace, { labelSelector: `job-name=${t.name}` });
    return { ...t, job, pods, reads };
  };

  app.get(BASE, async (c) => {
    const { account, job, pods } = await jobAndPods(c);
    return c.json(jobStatusView(job, pods, account));
  });
  app.get(`${BASE}/:fileName`, async (c) => {
    const { account, namespace, name, job, pods, reads } = await jobAndPods(c);
    const view = jobStatusView(job, pods, account);
    if (!view.mostRecentPodName) throw new HttpError(404, 'Not Found', `job ${name} has no pods to read the property file from`);
    const container = c.req.param('fileName');
    const log = await reads.logs(account, namespace, view.mostRecentPodName, container).catch((err: unknown) => {
      if (err instanceof AgentCallError)
        throw new HttpError(
          404,
          'Not Found',
          `no log for container ${JSON.stringify(container)} of pod ${view.mostRecentPodName}: ${err.message}`,
        );
      throw err;
    });
    try {
      return c.json(parsePropertyFile(log));
    } catch (err) {
      if (err instanceof PropertyFileError) throw new HttpError(400, 'Bad Request', err.message);
      throw err;
    }
  });
  app.delete(BASE, async (c) => {
    const t = await target(c);
    try {
      await createAgentCalls(deps.operations, `cancel-${randomUUID()}`, undefined, requesterOfRequest(c)).run(t.account, {
        case: 'delete',
        value: create(DeleteSpecSchema, {
          kind: 'Job',
          namespace: t.namespace,
          name: t.name,
          propagationPolicy: PropagationPolicy.BACKGROUND,
        }),
      });
    } catch (err) {
      if (err instanceof AgentCallError && err.statusCode === 404) throw new HttpError(404, 'Not Found', `job ${t.name} not found`);
      if (err instanceof AgentCallError) throw new HttpError(503, 'Service Unavailable', `could not cancel job ${t.name}: ${err.message}`);
      throw err;
    }
    return c.body(null, 200);
  });
}
