/**
 * Walks a module list: builds the modules the configuration leaves in, in order, merging what they contribute; the
 * caller then serves the contributions and starts the built modules in the same order (startModules).
 */
import type { GatewayCore } from './gateway-core.js';
import type { BuiltModule, GatewayModule, ModuleContributions } from './module.js';

/** The modules built, and their contributions merged in list order. */
export interface BuiltModules {
  readonly modules: readonly { readonly name: string; readonly built: BuiltModule }[];
  readonly contributions: ModuleContributions;
}

/**
 * Builds each enabled module of `list` in order, handing each what the earlier ones contributed. A contribution only
 * one module may make (the REST app, the agent stream, the kube endpoint, the dashboard directory) made twice is a
 * programming error: it throws.
 */
export async function buildModules(list: readonly GatewayModule[], core: GatewayCore): Promise<BuiltModules> {
  const modules: { name: string; built: BuiltModule }[] = [];
  let merged: ModuleContributions = {};
  for (const module of list) {
    if (module.enabled && !module.enabled(core.config)) continue;
    const built = await module.build(core, merged);
    merged = merge(merged, built, module.name);
    modules.push({ name: module.name, built });
  }
  return { modules, contributions: merged };
}

/** Starts the built modules in order; each registers its stops on the core's closers as it starts. */
export async function startModules(built: BuiltModules): Promise<void> {
  for (const { built: module } of built.modules) await module.start?.();
}

function merge(into: ModuleContributions, from: ModuleContributions, name: string): ModuleContributions {
  const single = <K extends 'webDir' | 'restFetch' | 'agentStream' | 'kube'>(key: K): ModuleContributions[K] => {
    if (into[key] !== undefined && from[key] !== undefined) throw new Error(`module ${name} contributes ${key} a second time`);
    return into[key] ?? from[key];
  };
  return {
    services: [...(into.services ?? []), ...(from.services ?? [])],
    restRoutes: [...(into.restRoutes ?? []), ...(from.restRoutes ?? [])],
    webDir: single('webDir'),
    restFetch: single('restFetch'),
    agentStream: single('agentStream'),
    kube: single('kube'),
  };
}
