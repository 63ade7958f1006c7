/**
 * An agent module: one part of the agent, started from the core (agent-core.ts) and what the modules before it
 * provided, in the order of one list (module-list.ts). Its start registers each part's stop on the core's closers
 * right after starting it, so the parts stop in reverse and a failed start stops only what started.
 */
import type { AccountManager } from '../accounts/account-manager.js';
import type { TokenSource } from '../stream/token-source.js';
import type { AgentCore } from './agent-core.js';

/** What modules provide to the ones after them and to the running agent. */
export interface AgentParts {
  /** The admin port actually bound. */
  readonly adminPort?: number;
  /** The Prometheus port actually bound. */
  readonly metricsPort?: number;
  /** The accounts of the config file and of the gateway, prepared and watched. */
  readonly accounts?: AccountManager;
  /** The credentials of the stream to the gateway. */
  readonly token?: TokenSource;
}

/** One module of the agent. */
export interface AgentModule {
  /** Short kebab-case name. */
  readonly name: string;
  /** What it runs, in a few words. */
  readonly serves: string;
  /** Whether this agent runs it; always when absent. A module left out is not started. */
  enabled?(core: AgentCore): boolean;
  /** Starts the module, registering its stops on `core.closers`; returns what it provides to the modules after it. */
  start(core: AgentCore, earlier: AgentParts): Promise<AgentParts | undefined> | AgentParts | undefined;
}

/** The part `key` a module needs from an earlier one; throws (a mistake in the list's order) when none provided it. */
export function needPart<K extends keyof AgentParts>(earlier: AgentParts, key: K, module: string): NonNullable<AgentParts[K]> {
  const part = earlier[key];
  if (part === undefined) throw new Error(`agent module ${module} needs ${key}, which no module before it provides`);
  return part as NonNullable<AgentParts[K]>;
}

/** Starts each enabled module of `list` in order; resolves with every part they provided. */
export async function startAgentModules(list: readonly AgentModule[], core: AgentCore): Promise<AgentParts> {
  let parts: AgentParts = {};
  for (const module of list) {
    if (module.enabled && !module.enabled(core)) continue;
    parts = { ...parts, ...(await module.start(core, parts)) };
  }
  return parts;
}
