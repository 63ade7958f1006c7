/**
 * Per watch scope: object (namespace, name) → last forwarded resourceVersion. This is all the state the agent keeps
 * per object (it is a forwarder, not a cache); it lets watch events that are stale or duplicated (a re-list racing a
 * watch, a watch restarted from an older version) be dropped.
 *
 * Kept compact, as it is the one structure that grows with the number of objects watched (docs/benchmarks.md, agent
 * footprint): one map of names per namespace, so no `namespace/name` key string is built and kept per object (the
 * name string the decoder made is the key), and a resourceVersion in canonical decimal form that fits a double
 * exactly is stored as a number (a small integer takes no memory of its own in the map) instead of a string. Any
 * other resourceVersion is kept as the string it was; comparisons are those of {@link isNewerVersion} either way.
 */

/** Compares two resourceVersions: numeric ones by value, opaque ones only for equality. */
export function isNewerVersion(candidate: string, known: string): boolean {
  if (candidate === known) return false;
  if (/^\d+$/.test(candidate) && /^\d+$/.test(known)) return BigInt(candidate) > BigInt(known);
  return true;
}

/** Tracks resourceVersions of one watch scope. */
export interface VersionTracker {
  /** Whether a watch event for the object at `resourceVersion` should be forwarded; records it when so. */
  acceptEvent(namespace: string, name: string, resourceVersion: string, deleted: boolean): boolean;
  /** Starts a full list: the next {@link finishList} replaces the whole state with what was listed. */
  beginList(): void;
  /** Records one listed object (always forwarded: the gateway prunes what a list does not contain). */
  recordListed(namespace: string, name: string, resourceVersion: string): void;
  finishList(): void;
  /** Number of objects tracked. */
  readonly size: number;
}

/** A stored resourceVersion: a number when it is canonical decimal (no leading zero) below 2^53, else the string. */
type StoredVersion = number | string;

/** Canonical decimal resourceVersions of at most 15 digits: exactly representable as a double. */
const COMPACT = /^(?:0|[1-9]\d{0,14})$/;

/** The form a resourceVersion is stored in (see {@link StoredVersion}). */
export function storedVersion(resourceVersion: string): StoredVersion {
  return COMPACT.test(resourceVersion) ? Number(resourceVersion) : resourceVersion;
}

/** {@link isNewerVersion} against a stored version. */
function isNewerThanStored(candidate: string, known: StoredVersion): boolean {
  if (typeof known === 'string') return isNewerVersion(candidate, known);
  // Both canonical decimals below 2^53: comparing the numbers is comparing the values.
  if (COMPACT.test(candidate)) return Number(candidate) > known;
  return isNewerVersion(candidate, String(known));
}

/** namespace → name → version, with a count of the objects. */
class VersionMap {
  private readonly namespaces = new Map<string, Map<string, StoredVersion>>();
  size = 0;

  get(namespace: string, name: string): StoredVersion | undefined {
    return this.namespaces.get(namespace)?.get(name);
  }

  set(namespace: string, name: string, version: StoredVersion): void {
    let names = this.namespaces.get(namespace);
    if (names === undefined) this.namespaces.set(namespace, (names = new Map()));
    const before = names.size;
    names.set(name, version);
    this.size += names.size - before;
  }

  delete(namespace: string, name: string): void {
    const names = this.namespaces.get(namespace);
    if (names === undefined || !names.delete(name)) return;
    this.size--;
    if (names.size === 0) this.namespaces.delete(namespace);
  }
}

/** Creates an empty tracker. */
export function createVersionTracker(): VersionTracker {
  let versions = new VersionMap();
  let listing: VersionMap | undefined;
  return {
    acceptEvent(namespace, name, resourceVersion, deleted) {
      const known = versions.get(namespace, name);
      if (known !== undefined && resourceVersion !== '' && !isNewerThanStored(resourceVersion, known)) return false;
      if (deleted) versions.delete(namespace, name);
      else versions.set(namespace, name, storedVersion(resourceVersion));
      return true;
    },
    beginList() {
      listing = new VersionMap();
    },
    recordListed(namespace, name, resourceVersion) {
      (listing ?? versions).set(namespace, name, storedVersion(resourceVersion));
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
