/**
 * The seam between account management (REST/RPC, which defines dynamic accounts) and the agent streams (which tell
 * agents to start or stop serving them). Management pushes commands through an {@link AccountCommandBus}; a stream
 * asks an {@link DynamicAccountSource} which dynamic accounts its agent should serve right after its Welcome.
 */
import type { AccountCommand, AccountDefinition } from '../../gen/outpost/agent/v1/agent_pb.js';
import type { SessionRegistry } from './session-registry.js';

/** Sends account commands to the live agent streams of this replica. */
export interface AccountCommandBus {
  /**
   * Queues the command on every live, welcomed stream whose agent zone equals `zone` (every live stream when `zone`
   * is empty) and whose agent identity may register the account's name. Returns the number of streams told. Never
   * throws.
   */
  push(zone: string, command: AccountCommand): number;
}

/** The dynamic accounts agents should serve. */
export interface DynamicAccountSource {
  /** Definitions of the dynamic accounts an agent of `zone` should serve now (zone '' accounts go to every agent). */
  activeFor(zone: string): Promise<AccountDefinition[]>;
}

/**
 * The bus over this replica's live sessions. Streams on other replicas are not reached: each replica's streams get
 * the current definitions from the {@link DynamicAccountSource} when they are welcomed.
 */
export function createAccountCommandBus(registry: SessionRegistry): AccountCommandBus {
  return {
    push(zone, command) {
      let told = 0;
      for (const session of registry.all()) {
        if (zone !== '' && session.zone !== zone) continue;
        try {
          if (session.sendAccountCommand(command)) told++;
        } catch {
          // A stream that cannot take the command is ending; it is not counted.
        }
      }
      return told;
    },
  };
}
