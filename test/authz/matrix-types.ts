/**
 * The shapes of the authorization matrix: a row per REST route or RPC method (plus scenario rows for conditions a
 * plain call cannot show), four cells per row — one per credential kind — each naming the identity it presents, what
 * it sends when that differs from the row's request, and the outcome expected. {@link rowOf} derives the usual cells
 * from the role a row requires, so the table states each rule once.
 */
import type { IdentityName } from './identities.js';
import { isClouddriverPath } from '../../src/gateway/spinnaker/clouddriver-paths.js';

/** The credential kinds of the matrix, in column order. */
export const CREDENTIALS = ['none', 'wrong', 'other', 'valid'] as const;
/** One credential kind: nothing, a credential the gateway rejects, a valid credential of the wrong identity, the right one. */
export type Credential = (typeof CREDENTIALS)[number];

/** What a route or method requires (as docs/security.md states it). */
export type Requirement = 'none' | 'read' | 'write' | 'admin' | 'replica' | 'agent' | 'spinnaker' | 'kube';

/**
 * A request a cell sends. Strings `$session:<stream>` and `$token:<stream>` anywhere in a REST body are replaced by the
 * session id / session token of a fixture agent stream (`agentA`, `agentAResume`, `agentAStandby`, `agentB`).
 */
export type Probe =
  | {
      kind: 'rest';
      method: string;
      path: string;
      body?: unknown;
      /** Extra request headers (`X-SPINNAKER-ACCOUNTS`…). */
      headers?: Record<string, string>;
      /** A Secret value the answer must not hold: a success becomes `200 redacted`, or `200 LEAKED`. */
      secret?: string;
      /** Send the path byte for byte (a `fetch` URL would resolve backslashes and dot segments first). */
      raw?: boolean;
    }
  | {
      kind: 'rpc';
      /** `connect-json`: Connect protocol, JSON, HTTP/1.1 (unary and server streams); `grpc`: gRPC over h2c (bidi). */
      transport: 'connect-json' | 'grpc';
      service: string;
      method: string;
      /** The (first) request message, protobuf JSON. */
      message: Record<string, unknown>;
      /** A Secret value the answer must not hold: a success becomes `OK redacted`, or `OK LEAKED`. */
      secret?: string;
    }
  | {
      kind: 'agent';
      /** `grpc`: gRPC over h2c (the agent's own path); `connect-h2`: Connect protocol over h2c (through connect-node). */
      transport: 'grpc' | 'connect-h2';
      agentId: string;
      accounts: string[];
      /** Resume the session of a fixture stream, presenting that stream's token or another one's. */
      resume?: { session: FixtureStream; token: FixtureStream };
      /** Compare the Welcome's verdicts too: the outcome becomes `OK <VERDICT>` (of the first account). */
      verdicts?: boolean;
    }
  | {
      /**
       * Work before authentication (docs/architecture.md, rule 9): a Connect JSON unary call over HTTP/1.1 whose chunked body stops
       * halfway. The outcome is the code followed by `before the body ended` when the gateway answered while the body
       * was still open, or by `after the body ended` when it waited (the probe then sends the rest).
       */
      kind: 'stalled';
      service: string;
      method: string;
      message: Record<string, unknown>;
    }
  | {
      /**
       * An agent answers operation `operationId` (sent to fixture stream agentA during set-up) with a result whose
       * message is `marker`: on a fixture stream, or on a new stream (gRPC) it opens first. The outcome is `recorded`
       * when the operation then holds that result, `ignored` otherwise (or the stream's error code).
       */
      kind: 'result';
      operationId: string;
      marker: string;
      from: { fixture: FixtureStream } | { agentId: string; account: string };
    };

/** The fixture agent streams (opened before the cells run). */
export type FixtureStream = 'agentA' | 'agentAResume' | 'agentAStandby' | 'agentB';

/** One cell: who calls, what (when not the row's request), and the outcome expected. */
interface Cell {
  as: IdentityName;
  /**
   * REST: `<status>` for 2xx/3xx, `<status> <error>` otherwise (`401 unauthenticated`; on `/k8s` the Kubernetes
   * Status's `reason`, `403 Forbidden`). RPC: the ConnectError code
   * name (`Unauthenticated`, `PermissionDenied`) or `OK`; agent streams with verdicts: `OK CACHING`.
   */
  expect: string;
  request?: Probe;
}

/** One row of the matrix. */
export interface MatrixRow {
  surface: 'rest' | 'rpc';
  /** The route (`GET /armory/accounts/:name`, Hono pattern; `ALL` for a catch-all) or RPC (`pkg.Service/Method`). */
  target: string;
  /** What this row adds to a plain call of the target; empty for the target's main row. */
  scenario: string;
  requires: Requirement;
  request: Probe;
  cells: Record<Credential, Cell>;
  /** True for a row whose target is not a registered route (exempt from the "names a real route" check). */
  unrouted?: boolean;
}

const OTHER: Record<Requirement, IdentityName> = {
  none: 'agentA',
  read: 'agentA',
  write: 'reader',
  admin: 'writer',
  replica: 'admin',
  agent: 'admin',
  spinnaker: 'admin',
  kube: 'reader',
};
const VALID: Record<Requirement, IdentityName> = {
  none: 'reader',
  read: 'reader',
  write: 'writer',
  admin: 'admin',
  replica: 'replica',
  agent: 'agentA',
  spinnaker: 'spinnaker',
  kube: 'kube',
};

/** Options of {@link rowOf}: the expected outcome of the valid call, and cells that differ from the defaults. */
export interface RowOptions {
  valid: string;
  scenario?: string;
  cells?: Partial<Record<Credential, Partial<Cell>>>;
  unrouted?: boolean;
}

/**
 * A row with the cells its requirement implies: `none` and `wrong` (a bad token; a forged replica token on replica
 * routes) are refused as unauthenticated, `other` (an identity lacking the role: see OTHER) is refused as permission
 * denied, `valid` gets `options.valid`. Routes requiring nothing give `options.valid` to every cell.
 */
export function rowOf(target: string, requires: Requirement, request: Probe, options: RowOptions): MatrixRow {
  const surface = request.kind === 'rest' ? 'rest' : 'rpc';
  // The Clouddriver API answers in Spring's error shape (`error` is the HTTP reason phrase).
  const spring = request.kind === 'rest' && isClouddriverPath(request.path.split('?')[0]!);
  // `/k8s` answers with Kubernetes Status objects: the outcome names their `reason`.
  const kubeStatus = request.kind === 'rest' && request.path.startsWith('/k8s/');
  const denied =
    surface === 'rest'
      ? spring || kubeStatus
        ? { authn: '401 Unauthorized', authz: '403 Forbidden' }
        : { authn: '401 unauthenticated', authz: '403 permission_denied' }
      : { authn: 'Unauthenticated', authz: 'PermissionDenied' };
  const open = requires === 'none';
  const base: Record<Credential, Cell> = {
    none: { as: 'none', expect: open ? options.valid : denied.authn },
    wrong: { as: requires === 'replica' ? 'forgedReplica' : 'badToken', expect: open ? options.valid : denied.authn },
    other: { as: OTHER[requires], expect: open ? options.valid : denied.authz },
    valid: { as: VALID[requires], expect: options.valid },
  };
  for (const [kind, cell] of Object.entries(options.cells ?? {}) as [Credential, Partial<Cell>][]) base[kind] = { ...base[kind], ...cell };
  return { surface, target, scenario: options.scenario ?? '', requires, request, cells: base, unrouted: options.unrouted };
}
