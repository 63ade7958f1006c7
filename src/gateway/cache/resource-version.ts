/**
 * Ordering of Kubernetes resourceVersions. They are opaque strings in general, but every real API server (and the
 * sandbox) uses etcd revisions: decimal integers. The cache compares them as integers when both are numeric, and
 * otherwise lets the newer message win (the stream is ordered).
 */
import { sql, type SQL } from 'drizzle-orm';

const NUMERIC = /^[0-9]{1,30}$/;

/** True when `candidate` must not replace `stored`: both numeric and candidate is strictly smaller. */
export function isOlderResourceVersion(candidate: string, stored: string): boolean {
  if (!NUMERIC.test(candidate) || !NUMERIC.test(stored)) return false;
  return BigInt(candidate) < BigInt(stored);
}

/**
 * SQL twin of `!isOlderResourceVersion(candidate, stored)`: true when the candidate may replace the stored row.
 * Both arguments are SQL expressions of type text.
 */
export function sqlNotOlder(candidate: SQL, stored: SQL): SQL {
  return sql`(case when ${candidate} ~ '^[0-9]{1,30}$' and ${stored} ~ '^[0-9]{1,30}$' then ${candidate}::numeric >= ${stored}::numeric else true end)`;
}
