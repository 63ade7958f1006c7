/**
 * The Clouddriver operation names Outpost runs and how each description is validated and prepared. An unknown name
 * is a 400, as Clouddriver's missing converter is.
 */
import type { PreparedOperation } from '../task-runner.js';
import { badDescription, type Description } from './description-fields.js';
import { prepareDelete } from './delete-manifest.js';
import { preparePatch, type PatchBinder } from './patch-manifest.js';
import { isRolloutVerb, prepareRollout } from './rollout-manifest.js';
import { prepareScale } from './scale-manifest.js';

/** What preparing an operation may need from the gateway. */
export interface PrepareDeps {
  /** Binds artifacts into strategic and merge patches. */
  bindPatch?: PatchBinder;
  /** Operations added by other modules (deploy, traffic, jobs), by name. */
  extra?: Record<string, (description: Description) => PreparedOperation>;
}

const BUILT_IN: Record<string, (description: Description, deps: PrepareDeps) => PreparedOperation> = {
  scaleManifest: (d) => prepareScale(d),
  deleteManifest: (d) => prepareDelete(d),
  patchManifest: (d, deps) => preparePatch(d, deps.bindPatch),
};

/** Every operation name accepted, given the extra ones. */
function operationNames(deps: PrepareDeps): string[] {
  return [
    ...Object.keys(BUILT_IN),
    'undoRolloutManifest',
    'rollingRestartManifest',
    'pauseRolloutManifest',
    'resumeRolloutManifest',
    ...Object.keys(deps.extra ?? {}),
  ].sort();
}

/** Validates one description; 400 for an unknown name or a bad description. */
export function prepareOperation(name: string, description: Description, deps: PrepareDeps): PreparedOperation {
  if (isRolloutVerb(name)) return prepareRollout(name, description);
  const prepare = Object.hasOwn(BUILT_IN, name) ? BUILT_IN[name] : undefined;
  if (prepare) return prepare(description, deps);
  const extra = deps.extra && Object.hasOwn(deps.extra, name) ? deps.extra[name] : undefined;
  if (extra) return extra(description);
  throw badDescription(`no operation named ${JSON.stringify(name)} (Outpost runs ${operationNames(deps).join(', ')})`);
}

/** Reads Orca's body: a non-empty array of single-key objects `{"<operation>": {description}}`. */
export function parseOperationsBody(body: unknown): { name: string; description: Description }[] {
  if (!Array.isArray(body) || body.length === 0)
    throw badDescription('the body must be a non-empty JSON array of {"<operation>": {description}} objects');
  const out: { name: string; description: Description }[] = [];
  for (const [n, item] of body.entries()) {
    if (!item || typeof item !== 'object' || Array.isArray(item))
      throw badDescription(`operation ${n} must be an object {"<operation>": {description}}`);
    const entries = Object.entries(item as Record<string, unknown>);
    if (entries.length !== 1) throw badDescription(`operation ${n} must have exactly one key, the operation name (got ${entries.length})`);
    const [name, description] = entries[0]!;
    if (!description || typeof description !== 'object' || Array.isArray(description))
      throw badDescription(`the description of ${name} must be an object`);
    out.push({ name, description: description as Description });
  }
  return out;
}
