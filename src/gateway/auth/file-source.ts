/**
 * A secret or key kept in a file that operators rotate in place (token files, JWT secrets, replica secrets): read at
 * start, then re-read whenever the file's size, mtime or inode changes. Checks are one async `stat` per use, so a
 * rotated file takes effect on the very next request. A file that disappears keeps the last good value for
 * {@link FileSource.read} (keys: a broken mount must not lock every client out), while
 * {@link FileSource.readIfReadable} reports it as gone (credentials: a deleted token file revokes the token). `onError`
 * hears once each time the file turns unreadable.
 */
import { readFileSync, statSync, type Stats } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';

/** The current contents of a file, re-read on change. */
export interface FileSource {
  readonly path: string;
  /** The latest contents (the last good ones when the file is momentarily unreadable). */
  read(): Promise<Buffer>;
  /** The latest contents, or undefined while the file is unreadable (deleted, permissions): fail closed. */
  readIfReadable(): Promise<Buffer | undefined>;
  /** The contents read last, without checking the file (validation at start). */
  current(): Buffer;
}

/**
 * Reads `path` now (throws a clear error naming `what` when it cannot) and returns a source that re-reads it when it
 * changes. `onError` hears about later read failures; the previous contents stay in use meanwhile.
 */
export function createFileSource(path: string, what: string, onError: (err: Error) => void = () => {}): FileSource {
  let current: Buffer;
  let signature: string;
  try {
    signature = signatureOf(statSync(path));
    current = readFileSync(path);
  } catch (err) {
    throw new Error(`${what}: cannot read ${path}: ${(err as Error).message}`);
  }
  let unreadable = false;
  let pending: Promise<Buffer> | undefined;
  const refresh = async (): Promise<Buffer> => {
    try {
      const s = signatureOf(await stat(path));
      if (s !== signature) {
        current = await readFile(path);
        signature = s;
      }
      unreadable = false;
    } catch (err) {
      if (!unreadable) onError(new Error(`${what}: cannot read ${path}: ${(err as Error).message}`));
      unreadable = true;
      // re-read whatever appears next, even with the old signature
      signature = '';
    }
    return current;
  };
  const read = () => {
    // concurrent requests share one stat
    pending ??= refresh().finally(() => (pending = undefined));
    return pending;
  };
  return {
    path,
    current: () => current,
    read,
    async readIfReadable() {
      const contents = await read();
      return unreadable ? undefined : contents;
    },
  };
}

function signatureOf(s: Stats): string {
  return `${s.ino}:${s.size}:${s.mtimeMs}`;
}
