/**
 * A count with its noun in the right number ("1 revision", "3 revisions", "0 pods"), for messages people read: no
 * "revision(s)", no "1 deployments".
 */

/** `n` followed by `singular` when n is 1, else by `plural` (default: singular + "s"). */
export function counted(n: number, singular: string, plural = `${singular}s`): string {
  return `${n} ${n === 1 ? singular : plural}`;
}
