/**
 * Reads the fleet summary that `FleetService` serves: accounts with their zone, lease and ingest counters, live agent
 * streams per replica, standby streams per account, open operations and the newest ones — a handful of small queries,
 * none per account, cheap enough to repeat every second.
 * The events-per-second figure is not read here: it is the growth of `eventsTotal` between readings (fleet-monitor.ts).
 */
import { create } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { Database } from '../../db/database.js';
import { AccountActivitySchema, FleetSchema, GatewayReplicaSchema, type Fleet } from '../../gen/outpost/api/v1/fleet_service_pb.js';
import { readAccountActivity } from '../accounts/account-reads.js';
import { liveSessionsByReplica, liveStandbyCounts } from '../agents/agent-session-reads.js';
import { toOperationRecord } from '../operations/operation-record.js';
import { newestOperationsSlim, openOperationCount } from '../operations/operation-summary-reads.js';

/** How many operations the summary carries. */
const RECENT_OPERATIONS = 10;

/** A gateway replica as the summary lists it. */
interface ReplicaInfo {
  id: string;
  baseUrl: string;
  ready: boolean;
  lastSeen: Date;
}

/** One reading of the database, before the rate is known. */
export interface FleetReading {
  fleet: Fleet;
  /** Sum of every account's `events_total` (the rate is its growth). */
  eventsTotal: number;
}

/** What a reading needs besides the database. */
export interface FleetReaderOptions {
  database: Database;
  /** Replicas known to this one, itself included. */
  replicas(): ReplicaInfo[];
  /** Session rows untouched for this long belong to a dead replica and are not counted. */
  staleAfterSeconds: number;
}

/** Reads the summary (rate 0: the caller sets it). Rejects when the database does. */
export async function readFleet(options: FleetReaderOptions): Promise<FleetReading> {
  const { db } = options.database;
  const [accountRows, agentsByReplica, standbyByAccount, inFlight, recentRows] = await Promise.all([
    readAccountActivity(db),
    liveSessionsByReplica(db, options.staleAfterSeconds),
    liveStandbyCounts(db, options.staleAfterSeconds),
    openOperationCount(db),
    newestOperationsSlim(db, RECENT_OPERATIONS),
  ]);
  const accountsByState: Record<string, number> = {};
  let eventsTotal = 0;
  for (const row of accountRows) {
    accountsByState[row.state] = (accountsByState[row.state] ?? 0) + 1;
    eventsTotal += row.eventsTotal;
  }
  const fleet = create(FleetSchema, {
    time: timestampFromDate(new Date()),
    replicas: options
      .replicas()
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      .map((r) =>
        create(GatewayReplicaSchema, {
          id: r.id,
          baseUrl: r.baseUrl,
          ready: r.ready,
          lastSeenTime: timestampFromDate(r.lastSeen),
          connectedAgents: agentsByReplica.get(r.id) ?? 0,
        }),
      ),
    connectedAgents: [...agentsByReplica.values()].reduce((a, b) => a + b, 0),
    accountsByState,
    accounts: accountRows.map((row) =>
      create(AccountActivitySchema, {
        name: row.name,
        state: row.state,
        gatewayId: row.gatewayId,
        agentId: row.agentId,
        eventsTotal: BigInt(row.eventsTotal),
        lastEventTime: row.lastEventAt ? timestampFromDate(row.lastEventAt) : undefined,
        zone: row.zoneId,
        desiredState: row.desiredState,
        leased: row.leased === true,
        standbyAgents: standbyByAccount.get(row.name) ?? 0,
      }),
    ),
    recentOperations: recentRows.map((row) => {
      const record = toOperationRecord(row);
      record.operation = undefined;
      return record;
    }),
    operationsInFlight: inFlight,
  });
  return { fleet, eventsTotal };
}
