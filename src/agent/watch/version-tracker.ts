/**
 * Per watch scope: object key → last forwarded resourceVersion. This is all the state the agent keeps per object
 * (it is a forwarder, not a cache); it lets watch events that are stale or duplicated (a re-list racing a watch, a
 * watch restarted from an older version) be dropped.
 */

/** Compares two resourceVersions: numeric ones by value, opaque ones only for equality. */
export function isNewerVersion(candidate: string, known: string): boolean {
  if (candidate === known) return false;
  if (/^\d+$/.test(candidate) && /^\d+$/.test(known)) return BigInt(candidate) > BigInt(known);
  return true;
}

/** Tracks resourceVersions of one watch scope. */
export interface VersionTracker {
  /** Whether a watch event for `key` at `resourceVersion` should be forwarded; records it when so. */
  acceptEvent(key: string, resourceVersion: string, deleted: boolean): boolean;
  /** Starts a full list: the next {@link finishList} replaces the whole state with what was listed. */
  beginList(): void;
  /** Records one listed object (always forwarded: the gateway prunes what a list does not contain). */
  recordListed(key: string, resourceVersion: string): void;
  finishList(): void;
  /** Number of objects tracked. */
  readonly size: number;
}

/** Creates an empty tracker. */
export function createVersionTracker(): VersionTracker {
  let versions = new Map<string, string>();
  let listing: Map<string, string> | undefined;
  return {
    acceptEvent(key, resourceVersion, deleted) {
      const known = versions.get(key);
      if (known !== undefined && resourceVersion !== '' && !isNewerVersion(resourceVersion, known)) return false;
      if (deleted) versions.delete(key);
      else versions.set(key, resourceVersion);
      return true;
    },
    beginList() {
      listing = new Map();
    },
    recordListed(key, resourceVersion) {
      (listing ?? versions).set(key, resourceVersion);
    },
    finishList() {
      if (listing !== undefined) versions = listing;
      listing = undefined;
    },
    get size() {
      return versions.size;
    },
  };
}
