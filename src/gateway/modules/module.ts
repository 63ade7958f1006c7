/**
 * A gateway module: one feature of the gateway, built from the core (gateway-core.ts), contributing what it serves
 * to the composition (Connect services, REST routes, the kube endpoint, …), then started. The composition walks one
 * list of them (module-list.ts): builds each in order, assembles the handler from their contributions, binds the
 * ports, starts each in order; each start registers its parts' stops on the core's closers, so they stop in reverse
 * and a failed start stops only what started. Modeled on the module factories of GitLab's kas.
 */
import type { DescService } from '@bufbuild/protobuf';
import type { ConnectRouter } from '@connectrpc/connect';
import type { Principal } from '../auth/principal.js';
import type { AgentTransport } from '../agents/agent-transport.js';
import type { ConnectRequest, ConnectResponse } from '../../gen/outpost/agent/v1/agent_pb.js';
import type { GatewayConfig } from '../config/schema.js';
import type { KubeEndpoint } from '../kube/kube-endpoint.js';
import type { RestRoutes } from '../rest/rest-app.js';
import type { GatewayCore } from './gateway-core.js';

/** One Connect/gRPC service a module serves: its descriptor (for admission, health, reflection) and its routes. */
export interface ConnectServiceContribution {
  readonly type: DescService;
  register(router: ConnectRouter): void;
}

/** Serves one admitted agent stream that reached an agent stream endpoint (the handler's own gRPC endpoint). */
type AgentStreamServer = (
  requests: AsyncIterable<ConnectRequest>,
  principal: Principal | undefined,
  transport: AgentTransport,
) => AsyncIterable<ConnectResponse>;

/** What modules contribute to the composition. Every field is optional; the composition merges them in list order. */
export interface ModuleContributions {
  /** Connect/gRPC services, registered on the one router in list order. */
  readonly services?: readonly ConnectServiceContribution[];
  /** A feature's REST routes, added to the REST app after its own (the module that builds the REST app reads them). */
  readonly restRoutes?: readonly RestRoutes[];
  /** The directory of dashboard files served at `/`. */
  readonly webDir?: string;
  /** The REST app's fetch: connect-node's fallback. Exactly one module contributes it. */
  readonly restFetch?: (request: Request) => Response | Promise<Response>;
  /** The agent stream in its usual gRPC form. Exactly one module contributes it. */
  readonly agentStream?: AgentStreamServer;
  /** kubectl through the gateway (`/k8s/…`); without it those paths answer like any unknown path. */
  readonly kube?: KubeEndpoint;
}

/** A built module: its contributions, and how it starts. */
export interface BuiltModule extends ModuleContributions {
  /**
   * Starts what the module runs (timers, watch streams), once the ports are bound. Registers each part's stop on
   * `core.closers` right after starting it: the stops run in reverse, after the drain and before the servers close.
   */
  start?(): void | Promise<void>;
}

/** One module of the gateway. Building must not start timers nor serve: starting does, after the ports are bound. */
export interface GatewayModule {
  /** Short kebab-case name, as in the table of docs/architecture.md. */
  readonly name: string;
  /** What it serves, in a few words of Markdown: the table of docs/architecture.md repeats it word for word. */
  readonly serves: string;
  /** Whether the configuration leaves it in; always when absent. A module left out is neither built nor started. */
  enabled?(config: GatewayConfig): boolean;
  /**
   * Builds the module from the core. `earlier` holds what the modules built before it contributed (a module that
   * assembles others' contributions — the REST app, health and reflection — comes after them in the list).
   */
  build(core: GatewayCore, earlier: ModuleContributions): BuiltModule | Promise<BuiltModule>;
}
