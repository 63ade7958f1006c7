/**
 * The faults the chaos suite injects. Each one starts a fault and returns how to heal it; healing brings every
 * process back (a killed replica or agent is restarted) so the next round starts from a whole system.
 */
import postgres from 'postgres';
import type { Rng } from '../../testkit/rng.js';
import type { ChaosSystem } from './chaos-system.js';

/** Ends a fault. */
export type Heal = () => Promise<void>;

/** One kind of fault. */
export interface Fault {
  readonly name: string;
  /** What it does, for the report. */
  readonly description: string;
  /** Its heal restarts a process and waits for it: healed after every other fault (say, a blackholed link). */
  readonly restarts?: boolean;
  inject(system: ChaosSystem, rng: Rng): Promise<Heal>;
}

const nothing: Heal = async () => {};

const runningGateways = (s: ChaosSystem) => s.cluster.gatewayNames.filter((g) => s.cluster.isRunning(g) && !s.cluster.isStopped(g));

/** Every fault, in a fixed order (the seed picks among them). */
export const FAULTS: readonly Fault[] = [
  {
    name: 'kill-gateway',
    description: 'kill -9 of a gateway replica (restarted when healed)',
    restarts: true,
    async inject(s, rng) {
      const live = runningGateways(s);
      if (live.length <= 1) return nothing;
      const victim = rng.pick(live);
      await s.cluster.kill(victim, 'SIGKILL');
      return () => s.cluster.restartGateway(victim);
    },
  },
  {
    name: 'kill-agent',
    description: 'kill -9 of an agent (restarted when healed)',
    restarts: true,
    async inject(s, rng) {
      const live = s.agents.filter((a) => s.cluster.isRunning(a));
      if (live.length === 0) return nothing;
      const victim = rng.pick(live);
      await s.cluster.kill(victim, 'SIGKILL');
      return () => s.cluster.restartAgent(victim);
    },
  },
  {
    name: 'tcp-cut',
    description: "every TCP connection of an agent's gateway link cut at once",
    async inject(s, rng) {
      s.proxies.get(rng.pick(s.agents))!.cutAll();
      return nothing;
    },
  },
  {
    name: 'tcp-blackhole',
    description: "an agent's gateway link stops passing bytes (connections stay open)",
    async inject(s, rng) {
      const proxy = s.proxies.get(rng.pick(s.agents))!;
      proxy.blackhole(true);
      return async () => proxy.blackhole(false);
    },
  },
  {
    name: 'tcp-delay',
    description: "every chunk on an agent's gateway link delayed 50–400 ms",
    async inject(s, rng) {
      const proxy = s.proxies.get(rng.pick(s.agents))!;
      proxy.setDelay(rng.int(50, 400));
      return async () => proxy.setDelay(0);
    },
  },
  {
    name: 'proxy-restart',
    description:
      "an agent's forward proxy (tinyproxy) killed mid-stream, cutting its CONNECT tunnel: restarted on the same port at once, or left down until healed",
    async inject(s, rng) {
      const proxy = s.forwardProxies.get(rng.pick(s.agents))!;
      if (rng.chance(0.5)) {
        await proxy.restart();
        return nothing;
      }
      await proxy.stop();
      return () => proxy.restart();
    },
  },
  {
    name: 'pg-terminate',
    description: 'every Postgres connection of the gateways terminated (pg_terminate_backend)',
    async inject(s) {
      const sql = postgres(s.postgres.url, { max: 1, onnotice: () => {} });
      try {
        const db = new URL(s.cluster.databaseUrl).pathname.slice(1);
        await sql`select pg_terminate_backend(pid) from pg_stat_activity where datname = ${db} and pid <> pg_backend_pid()`;
      } finally {
        await sql.end({ timeout: 2 });
      }
      return nothing;
    },
  },
  {
    name: 'pg-terminate-writer',
    description:
      "the Postgres backend running a replica's cache-write group statement terminated while it runs (the commit window of coalesced writes)",
    async inject(s) {
      const sql = postgres(s.postgres.url, { max: 1, onnotice: () => {} });
      try {
        const db = new URL(s.cluster.databaseUrl).pathname.slice(1);
        // The statements are short: look for one in flight for a few seconds, polling as fast as one connection can.
        for (const deadline = Date.now() + 5000; Date.now() < deadline; ) {
          const [hit] = await sql<{ pid: number }[]>`
            select pid from pg_stat_activity
            where datname = ${db} and state = 'active' and query like 'with fenced as (update accounts%' limit 1`;
          if (hit) {
            await sql`select pg_terminate_backend(${hit.pid})`;
            console.log(`# pg-terminate-writer: terminated backend ${hit.pid} in the middle of a cache-write group statement`);
            return nothing;
          }
        }
        // None caught in flight (the load paused): every backend then, as pg-terminate does.
        console.log('# pg-terminate-writer: no cache-write statement caught in flight within 5 s; terminated every backend');
        await sql`select pg_terminate_backend(pid) from pg_stat_activity where datname = ${db} and pid <> pg_backend_pid()`;
      } finally {
        await sql.end({ timeout: 2 });
      }
      return nothing;
    },
  },
  {
    name: 'pg-restart',
    description: 'Postgres restarted (fast shutdown, or an immediate crash-like stop)',
    async inject(s, rng) {
      await s.postgres.restart(rng.chance(0.5) ? 'fast' : 'immediate');
      return nothing;
    },
  },
  {
    name: 'sandbox-410',
    description: 'the API server forgets its watch history: open watches get 410 Gone and must re-list',
    async inject(s) {
      s.cluster.sandbox.faults.expireHistory();
      return nothing;
    },
  },
  {
    name: 'sandbox-500',
    description: '30% of API requests answered 500, and the next watches fail',
    async inject(s) {
      s.cluster.sandbox.faults.setErrorRate(0.3);
      s.cluster.sandbox.faults.failNextWatches(3, 500);
      return async () => {
        s.cluster.sandbox.faults.setErrorRate(0);
        s.cluster.sandbox.faults.failNextWatches(0, 500);
      };
    },
  },
  {
    name: 'sandbox-drop-watches',
    description: 'every open watch closed by the API server',
    async inject(s) {
      s.cluster.sandbox.faults.closeWatches();
      return nothing;
    },
  },
  {
    name: 'sandbox-latency',
    description: '100–500 ms added to every API request',
    async inject(s, rng) {
      s.cluster.sandbox.faults.setLatency(rng.int(100, 500));
      return async () => s.cluster.sandbox.faults.setLatency(0);
    },
  },
];
