/** Rows a page when the URL does not say (`size=`). */
export const DEFAULT_PAGE_SIZE = 50;
/** The most rows a page the list RPCs return. */
const MAX_PAGE_SIZE = 500;

/** The page size from the hash query's `size` (a whole number, 1 to 500); the default for anything else. */
export function readPageSize(query: URLSearchParams): number {
  const raw = query.get('size') ?? '';
  const n = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  return n >= 1 ? Math.min(n, MAX_PAGE_SIZE) : DEFAULT_PAGE_SIZE;
}
