/**
 * The deploy strategy an object asks for through its `strategy.spinnaker.io/*` annotations. These annotations are
 * read, never written by Spinnaker (except `recreate` for Run Job). Values are read as Java's
 * `Boolean.parseBoolean` reads them: only `true`, in any case, is true.
 */
import type { DeployStrategy } from './deploy-types.js';

export const STRATEGY_ANNOTATIONS = {
  versioned: 'strategy.spinnaker.io/versioned',
  maxVersionHistory: 'strategy.spinnaker.io/max-version-history',
  useSourceCapacity: 'strategy.spinnaker.io/use-source-capacity',
  recreate: 'strategy.spinnaker.io/recreate',
  replace: 'strategy.spinnaker.io/replace',
  serverSideApply: 'strategy.spinnaker.io/server-side-apply',
} as const;

const isTrue = (value: string | undefined): boolean => value?.toLowerCase() === 'true';

/** A 32-bit integer written in decimal with an optional sign (Guava's `Ints.tryParse`), else undefined. */
function parseInteger(value: string | undefined): number | undefined {
  if (value === undefined || !/^[+-]?\d+$/.test(value)) return undefined;
  const n = Number(value);
  return n >= -2147483648 && n <= 2147483647 ? n : undefined;
}

/**
 * Reads the strategy from an object's annotations. `recreate=true` wins over `replace=true`, which wins over
 * `server-side-apply` (`true` → on, `force-conflicts` → on with forced conflicts, anything else → off); without any
 * of them the object is applied client-side. `versioned` is set only when the annotation is present (any value
 * other than `true` means false); `maxVersionHistory` only when it is an integer.
 */
export function readStrategy(annotations: Readonly<Record<string, string>> | undefined): DeployStrategy {
  const a = annotations ?? {};
  const recreate = isTrue(a[STRATEGY_ANNOTATIONS.recreate]);
  const replace = !recreate && isTrue(a[STRATEGY_ANNOTATIONS.replace]);
  const ssaValue = a[STRATEGY_ANNOTATIONS.serverSideApply];
  const ssa: DeployStrategy['serverSideApply'] = isTrue(ssaValue) ? 'on' : ssaValue === 'force-conflicts' ? 'force-conflicts' : 'off';
  const strategy: DeployStrategy = {
    serverSideApply: recreate || replace ? 'off' : ssa,
    replace,
    recreate,
    useSourceCapacity: isTrue(a[STRATEGY_ANNOTATIONS.useSourceCapacity]),
  };
  if (Object.hasOwn(a, STRATEGY_ANNOTATIONS.versioned)) strategy.versioned = isTrue(a[STRATEGY_ANNOTATIONS.versioned]);
  const max = parseInteger(a[STRATEGY_ANNOTATIONS.maxVersionHistory]);
  if (max !== undefined) strategy.maxVersionHistory = max;
  return strategy;
}

/**
 * Forces the recreate strategy on annotations in place, as Run Job does: the other deploy strategy annotations
 * (`replace`, `server-side-apply`) are removed and `recreate` is set to `true`.
 */
export function forceRecreate(annotations: Record<string, string>): void {
  delete annotations[STRATEGY_ANNOTATIONS.replace];
  delete annotations[STRATEGY_ANNOTATIONS.serverSideApply];
  annotations[STRATEGY_ANNOTATIONS.recreate] = 'true';
}
