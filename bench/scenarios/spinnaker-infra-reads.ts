/**
 * The read half of the spinnaker-infra benchmark: Gate's calls against a loaded cache — `GET
 * /applications/{app}/serverGroups?expand=false` (Deck's Clusters tab) and `GET /applications?restricted=false&expand=true`
 * (Gate's application poller) — each beside its baseline, the very statements the infrastructure store issues for
 * it (built by `infrastructureQueries`, so the SQL and parameters are the store's) run with the postgres-js client
 * straight against Postgres, rows only: no account lookup, no mapping, no JSON answer. serverGroups is asked of two
 * gateways on the same database: one with the answer cache (what Deck's polls get while the application's accounts
 * do not change: the kept answer, after one indexed read of the accounts' versions) and one with it off (what every
 * poll after a change costs: the answer built from the cache). The sides take turns request by request (rotated:
 * ABC, BCA, CAB…), sequentially and then with several clients at once, so all see the same machine.
 */
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import type { Database } from '../../src/db/database.js';
import * as schema from '../../src/db/schema.js';
import { infrastructureQueries } from '../../src/gateway/cache/infrastructure-queries.js';
import { SERVER_GROUP_KINDS } from '../../src/gateway/spinnaker/infrastructure/object-facts.js';
import { summarize } from '../machine.js';

/** How many requests of each kind. */
export interface InfraReadsParams {
  warmup: number;
  /** Sequential requests of each side (serverGroups). */
  sequential: number;
  /** Clients at once, and requests of each side over all of them. */
  concurrency: number;
  concurrentRequests: number;
  /** Sequential requests of each side (applications). */
  applications: number;
}

/** Latencies of one call and its baseline (milliseconds). */
interface SideBySide {
  route: ReturnType<typeof summarize>;
  raw: ReturnType<typeof summarize>;
}

/** serverGroups: `route` built every time (answer cache off), `kept` from the answer cache, and the baseline. */
interface ServerGroupsSides extends SideBySide {
  /** Absent in results from before the answer cache. */
  kept?: ReturnType<typeof summarize>;
}

/** Figures of the reads. */
export interface InfraReadsResult {
  /** What the serverGroups answer held (checked against the fixture). */
  serverGroups: number;
  instances: number;
  responseBytes: number;
  /** Rows the baseline's three statements return (server groups, their pods, the Services of their namespaces). */
  rawRows: number;
  sequential: ServerGroupsSides;
  concurrent: ServerGroupsSides & { concurrency: number };
  /** Of the requests to the answer-cache gateway, the share served from a kept answer (its metrics); absent before it. */
  keptHitRatio?: number;
  applications: SideBySide & { count: number; responseBytes: number };
}

type Statement = { sql: string; params: unknown[] };

/** Times `fn` in milliseconds. */
async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

/** `n` requests of each side, alternating ABBA; the samples of each. */
async function alternate(n: number, a: () => Promise<unknown>, b: () => Promise<unknown>): Promise<[number[], number[]]> {
  const as: number[] = [];
  const bs: number[] = [];
  for (let i = 0; i < n; i++) {
    if (i % 2 === 0) {
      as.push(await timed(a));
      bs.push(await timed(b));
    } else {
      bs.push(await timed(b));
      as.push(await timed(a));
    }
  }
  return [as, bs];
}

/** `n` rounds of every side, the order rotated each round (ABC, BCA, CAB…); the samples of each side. */
async function rotate(n: number, sides: (() => Promise<unknown>)[]): Promise<number[][]> {
  const samples = sides.map(() => [] as number[]);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < sides.length; j++) {
      const k = (i + j) % sides.length;
      samples[k]!.push(await timed(sides[k]!));
    }
  }
  return samples;
}

/** The answer cache's hit and miss counts from a gateway's /metrics. */
async function answerCacheCounts(httpUrl: string): Promise<{ hit: number; miss: number }> {
  const text = await (await fetch(`${httpUrl}/metrics`)).text();
  const count = (result: string) => {
    const line = text.split('\n').find((l) => l.startsWith(`outpost_gateway_spinnaker_answer_cache_total{result="${result}"}`));
    return line ? Number(line.split(' ').at(-1)) : 0;
  };
  return { hit: count('hit'), miss: count('miss') };
}

/** `total` requests of `fn` over `clients` clients at once; the latency of each. */
async function concurrently(clients: number, total: number, fn: () => Promise<unknown>): Promise<number[]> {
  const samples: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next++ < total) samples.push(await timed(fn));
    }),
  );
  return samples;
}

/** GET `url`; the body's bytes (read in full, not parsed). Throws on a non-200 answer. */
async function getBytes(url: string): Promise<ArrayBuffer> {
  const res = await fetch(url);
  const body = await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`GET ${url}: ${res.status} ${Buffer.from(body).toString('utf8').slice(0, 500)}`);
  return body;
}

/**
 * Measures the reads of application `app` on the gateway at `httpUrl` (answer cache on) and the one at `builtUrl`
 * (answer cache off), whose database is `databaseUrl`; `expected` is what the fixture put there (both answers are
 * checked against it, and against each other, before anything is timed).
 */
export async function measureInfraReads(opts: {
  httpUrl: string;
  builtUrl: string;
  databaseUrl: string;
  app: string;
  expected: { serverGroups: number; instances: number };
  params: InfraReadsParams;
}): Promise<InfraReadsResult> {
  const { httpUrl, app, params } = opts;
  // The store's statements, built by its own query builders (never run through drizzle here).
  const builder = postgres(opts.databaseUrl, { max: 1, onnotice: () => {} });
  const q = infrastructureQueries(drizzle({ client: builder, schema }) as unknown as Database['db']);
  const sql = postgres(opts.databaseUrl, { max: params.concurrency, onnotice: () => {} });
  try {
    const run = (s: Statement) => sql.unsafe(s.sql, s.params as postgres.ParameterOrJSON<never>[], { prepare: false });
    // The accounts the route reads: every account the gateway knows (insecure mode may read them all).
    const accounts = (await sql<{ name: string }[]>`select name from accounts order by name`).map((r) => r.name);
    const linked: Statement = q.linkedToApp(accounts, app, SERVER_GROUP_KINDS, 'summary').toSQL();
    const serverGroups = (await run(linked)) as unknown as { account: string; object: { metadata: { uid: string; namespace: string } } }[];
    const sgAccounts = [...new Set(serverGroups.map((r) => r.account))];
    const pods: Statement = q
      .ownedBy(sgAccounts, [...new Set(serverGroups.map((r) => r.object.metadata.uid))], ['Pod'], 'instance')
      .toSQL();
    const services: Statement = q
      .ofKinds(sgAccounts, ['Service'], [...new Set(serverGroups.map((r) => r.object.metadata.namespace))])
      .toSQL();
    let rawRows = 0;
    // As the route runs them: the server groups, then their pods and the Services of their namespaces at once.
    const raw = async () => {
      const sgs = await run(linked);
      const [p, s] = await Promise.all([run(pods), run(services)]);
      rawRows = sgs.length + p.length + s.length;
    };
    const clusterKeys: Statement = q.clusterKeys(accounts).toSQL();
    const rawApplications = () => run(clusterKeys);

    const serverGroupsPath = `/applications/${encodeURIComponent(app)}/serverGroups?expand=false`;
    const serverGroupsUrl = `${opts.builtUrl}${serverGroupsPath}`;
    const keptUrl = `${httpUrl}${serverGroupsPath}`;
    const applicationsUrl = `${httpUrl}/applications?restricted=false&expand=true`;
    const first = await getBytes(serverGroupsUrl);
    const answer = JSON.parse(Buffer.from(first).toString('utf8')) as { instances: unknown[] }[];
    const instances = answer.reduce((n, sg) => n + sg.instances.length, 0);
    if (answer.length !== opts.expected.serverGroups || instances !== opts.expected.instances)
      throw new Error(
        `serverGroups of ${app}: ${answer.length} server groups and ${instances} instances, expected ${opts.expected.serverGroups} and ${opts.expected.instances}`,
      );
    const kept = await getBytes(keptUrl);
    if (!Buffer.from(kept).equals(Buffer.from(first))) throw new Error('the two gateways answered serverGroups differently');
    const apps = await getBytes(applicationsUrl);

    const sides = [() => getBytes(keptUrl), () => getBytes(serverGroupsUrl), raw];
    await rotate(params.warmup, sides);
    const countsBefore = await answerCacheCounts(httpUrl);
    const [seqKept, seqRoute, seqRaw] = await rotate(params.sequential, sides);
    const half = Math.ceil(params.concurrentRequests / 2);
    // Blocks of each side, the second half in the reverse order of the first.
    const [conKept, conRoute, conRaw] = [[], [], []] as number[][];
    const blocks = [conKept!, conRoute!, conRaw!];
    for (const order of [
      [0, 1, 2],
      [2, 1, 0],
    ]) {
      for (const k of order) blocks[k]!.push(...(await concurrently(params.concurrency, half, sides[k]!)));
    }
    const countsAfter = await answerCacheCounts(httpUrl);
    const hits = countsAfter.hit - countsBefore.hit;
    const lookups = hits + countsAfter.miss - countsBefore.miss;
    await alternate(params.warmup, () => getBytes(applicationsUrl), rawApplications);
    const [appsRoute, appsRaw] = await alternate(params.applications, () => getBytes(applicationsUrl), rawApplications);
    return {
      serverGroups: answer.length,
      instances,
      responseBytes: first.byteLength,
      rawRows,
      sequential: { route: summarize(seqRoute!), raw: summarize(seqRaw!), kept: summarize(seqKept!) },
      concurrent: { concurrency: params.concurrency, route: summarize(conRoute!), raw: summarize(conRaw!), kept: summarize(conKept!) },
      keptHitRatio: lookups > 0 ? hits / lookups : 0,
      applications: {
        count: (JSON.parse(Buffer.from(apps).toString('utf8')) as unknown[]).length,
        responseBytes: apps.byteLength,
        route: summarize(appsRoute),
        raw: summarize(appsRaw),
      },
    };
  } finally {
    await sql.end({ timeout: 5 });
    await builder.end({ timeout: 1 });
  }
}
