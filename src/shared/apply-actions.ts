/**
 * The words an apply reports per object (OperationResult.actions), kubectl's own: `kubectl apply` prints
 * `configmap/a created`, `… configured`, `… unchanged` (client-side apply whose patch came out empty: nothing was
 * sent), `… serverside-applied`; `kubectl replace` prints `… replaced`. The agent produces them, the gateway accepts
 * no other word, and the CLI prints them as they are.
 */

/** Every word an apply may report for one object. */
export const APPLY_ACTIONS = ['created', 'configured', 'unchanged', 'serverside-applied', 'replaced'] as const;

/** What happened to one applied object. */
export type ApplyAction = (typeof APPLY_ACTIONS)[number];

/** True when `word` is one of {@link APPLY_ACTIONS}. */
export function isApplyAction(word: string): word is ApplyAction {
  return (APPLY_ACTIONS as readonly string[]).includes(word);
}
