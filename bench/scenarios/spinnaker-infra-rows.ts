/**
 * Table rows of the spinnaker-infra scenario (one run: its percentiles are over the requests and changes of that
 * run). The targets — serverGroups p99 ≤ 100 ms, a scaling shown within 1 s at p99 — are judged only at full size
 * (1,000 server groups, 20 scalings): a --quick run is too small.
 */
import { figureRow, type Row } from '../rows.js';
import { SCHEMAS, type InfraSchema } from './spinnaker-infra-writes.js';
import type { SpinnakerInfraParams, SpinnakerInfraResult } from './spinnaker-infra.js';

const SCHEMA_NAMES: Record<InfraSchema, string> = {
  '0012': 'as migrated (0012 and 0013: generated columns + indexes)',
  columns: 'generated columns, their 3 indexes dropped',
  'pre-0012': 'without the 6 columns (the schema before 0012)',
};

/** How the run was set up (printed above the table). */
export function spinnakerInfraNote(p: Omit<SpinnakerInfraParams, 'postgresUrl'>): string {
  const f = p.fixture;
  return (
    `Spinnaker infra: one gateway (insecure) on Postgres; ${f.accounts} simulated agents (one HTTP/2 stream and account each) list ` +
    `${f.serverGroups} ReplicaSets of application shop (${f.clustersPerAccount} Deployments per account, ${f.podsPerServerGroup} pods each) ` +
    `and ${f.otherApps} other applications per account through the gateway's write path; then VACUUM ANALYZE, and a real agent ` +
    "streams an in-process sandbox (every kind) as account live. Reads are Gate's calls (`/applications/shop/serverGroups?expand=false`, " +
    "`/applications?restricted=false&expand=true`), each alternated request by request with its baseline: the infrastructure store's " +
    'own statements (linkedToApp, then ownedBy pods and ofKinds Service at once; clusterKeys) run with postgres-js straight against ' +
    'Postgres, rows only. serverGroups is asked of the gateway (answer cache on: kept answers while the accounts do not change) and of ' +
    'a second gateway on the same database with `spinnaker.answerCacheMegabytes: 0` (built every time, as after any change). ' +
    `Scale and first-deploy figures poll the route every ${p.pollMs} ms, so they include up to one poll interval and one read.`
  );
}

/** The rows of a run. */
export function spinnakerInfraRows(r: SpinnakerInfraResult, p: Omit<SpinnakerInfraParams, 'postgresUrl'>): Row[] {
  const judged = p.fixture.serverGroups >= 1000 && p.freshness.rounds >= 20;
  const { reads } = r;
  const s = 'spinnaker infra';
  const ms = (measure: string, value: number, target?: { text: string; max: number }) =>
    figureRow(s, measure, [value], {
      digits: value < 10 ? 1 : 0,
      ...(target ? { target: target.text, meets: (m: number) => m <= target.max, judged } : {}),
    });
  const sg = `serverGroups (${reads.serverGroups} server groups, ${reads.instances} instances, ${p.fixture.accounts} accounts, ${(reads.responseBytes / 2 ** 20).toFixed(1)} MiB)`;
  const raw = `baseline: the store's 3 statements straight from Postgres (${reads.rawRows} rows)`;
  const c = reads.concurrent.concurrency;
  const writes = r.writes;
  const poll = `polled every ${p.pollMs} ms`;
  const { kept: seqKept } = reads.sequential;
  const conKept = reads.concurrent.kept;
  // Results from before the answer cache have one serverGroups side (built every time), judged against the target.
  const serverGroupRows = seqKept
    ? [
        ms(
          `${sg}, kept by the answer cache (accounts unchanged; ${((reads.keptHitRatio ?? 0) * 100).toFixed(1)} % hits), p50 ms (${seqKept.n} sequential)`,
          seqKept.p50,
        ),
        ms('serverGroups kept, p99 ms', seqKept.p99, { text: '≤ 100 ms', max: 100 }),
        ms(
          `serverGroups built (answer cache off: a poll after a change), p50 ms (${reads.sequential.route.n} sequential)`,
          reads.sequential.route.p50,
        ),
        ms('serverGroups built, p99 ms', reads.sequential.route.p99),
      ]
    : [
        ms(`${sg}, p50 ms (${reads.sequential.route.n} sequential)`, reads.sequential.route.p50),
        ms(`${sg}, p99 ms`, reads.sequential.route.p99, { text: '≤ 100 ms', max: 100 }),
      ];
  const route = seqKept ? 'serverGroups built' : 'serverGroups';
  return [
    ...serverGroupRows,
    ms(`${raw}, p50 ms`, reads.sequential.raw.p50),
    ms(`${raw}, p99 ms`, reads.sequential.raw.p99),
    figureRow(s, `${route} / baseline, p50 (same run, alternated)`, [reads.sequential.route.p50 / reads.sequential.raw.p50], {
      digits: 2,
    }),
    ...(seqKept
      ? [figureRow(s, 'serverGroups kept / baseline, p50 (same run, alternated)', [seqKept.p50 / reads.sequential.raw.p50], { digits: 2 })]
      : []),
    ...(conKept
      ? [
          ms(`serverGroups kept, ${c} clients at once, p50 ms (${conKept.n} requests)`, conKept.p50),
          ms(`serverGroups kept, ${c} clients at once, p99 ms`, conKept.p99),
        ]
      : []),
    ms(`${route}, ${c} clients at once, p50 ms (${reads.concurrent.route.n} requests)`, reads.concurrent.route.p50),
    ms(`${route}, ${c} clients at once, p99 ms`, reads.concurrent.route.p99),
    ms(`baseline, ${c} clients at once, p50 ms`, reads.concurrent.raw.p50),
    ms(`baseline, ${c} clients at once, p99 ms`, reads.concurrent.raw.p99),
    ms(
      `GET /applications (${reads.applications.count} applications), p50 ms (${reads.applications.route.n} sequential)`,
      reads.applications.route.p50,
    ),
    ms('GET /applications, p99 ms', reads.applications.route.p99),
    ms("baseline: the store's cluster-keys statement straight from Postgres, p50 ms", reads.applications.raw.p50),
    ms(`sandbox Deployment scaled → desired capacity shown, p50 ms (${r.scale.capacity.n} scalings, ${poll})`, r.scale.capacity.p50),
    ms('scaled → desired capacity shown, p99 ms', r.scale.capacity.p99, { text: '≤ 1000 ms', max: 1000 }),
    ms('scaled → instance count shown, p50 ms', r.scale.instances.p50),
    ms('scaled → instance count shown, p99 ms', r.scale.instances.p99, { text: '≤ 1000 ms', max: 1000 }),
    ms(`new application's Deployment created → in GET /applications, p50 ms (${r.firstListed.n} applications, ${poll})`, r.firstListed.p50),
    ms('new application → listed, p99 ms', r.firstListed.p99),
    ...(writes
      ? [
          ...SCHEMAS.map((schema) =>
            figureRow(
              s,
              `load of ${writes.objects} objects through the gateway, objects/s, ${SCHEMA_NAMES[schema]} (${writes.rounds} loads)`,
              writes.objectsPerSecond[schema],
              { digits: 0 },
            ),
          ),
          figureRow(
            s,
            'load rate as migrated / before 0012 (per round)',
            writes.objectsPerSecond['0012'].map((x, i) => x / writes.objectsPerSecond['pre-0012'][i]!),
            { digits: 2 },
          ),
        ]
      : []),
  ];
}
