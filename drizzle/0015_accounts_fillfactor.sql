-- Lease renewals (every replica, every few seconds, one row per streamed account) and the cache writes' counters
-- change only unindexed columns of accounts: they can be HOT updates (no index entry written) when the row's page has
-- room for the new version. Full pages (the default fillfactor 100) made most of them cold. Pages keep half their room
-- free from now on; rows already stored move to such pages at their next update that does not fit (docs/scaling.md).
ALTER TABLE "accounts" SET (fillfactor = 50);
