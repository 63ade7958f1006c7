/**
 * Holds a fetched artifact until it is complete, so that an artifact over the size limit is a clear error answer
 * rather than a 200 cut off half-way: the first MiB in memory, the rest in a temporary file, and never more than the
 * limit in either — reading stops (and the source is destroyed) at the first byte past it. Callers stream the
 * complete body back and must `dispose()` it (the response stream does it when it closes).
 */
import { createReadStream } from 'node:fs';
import { mkdtemp, open, rm, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { upstreamFailed } from './artifact-errors.js';

/** A complete artifact, ready to be sent. */
export interface ArtifactBody {
  readonly size: number;
  /** The bytes, once; the temporary file (if any) is removed when the stream closes. */
  stream(): Readable;
  /** Removes the temporary file without streaming it (an answer that is not sent). Idempotent. */
  dispose(): Promise<void>;
}

const MEMORY_BYTES = 1024 * 1024;

/** An artifact already in memory (embedded/base64). */
export function bodyOf(bytes: Buffer): ArtifactBody {
  return { size: bytes.length, stream: () => Readable.from([bytes]), dispose: async () => {} };
}

/**
 * Reads `source` to its end into a body of at most `maxBytes`; past it the source is destroyed and the promise
 * rejects with a 502 naming `what` and the limit. A source that fails rejects with its error (the caller words it).
 * `options`: how much is held in memory before a temporary file (1 MiB), and where that file goes (the system's).
 */
export async function spoolBounded(
  source: Readable,
  maxBytes: number,
  what: string,
  options: { memoryBytes?: number; tempDir?: string } = {},
): Promise<ArtifactBody> {
  const memoryBytes = options.memoryBytes ?? MEMORY_BYTES;
  const chunks: Buffer[] = [];
  let inMemory = 0;
  let size = 0;
  let dir: string | undefined;
  let file: FileHandle | undefined;
  const cleanup = async () => {
    await file?.close().catch(() => {});
    file = undefined;
    if (dir) await rm(dir, { recursive: true, force: true }).catch(() => {});
    dir = undefined;
  };
  try {
    for await (const chunk of source as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > maxBytes) {
        source.destroy();
        throw upstreamFailed(`${what} is larger than ${maxBytes} bytes (spinnaker.artifacts.maxBytes)`);
      }
      if (!file && inMemory + chunk.length <= memoryBytes) {
        chunks.push(chunk);
        inMemory += chunk.length;
        continue;
      }
      if (!file) {
        dir = await mkdtemp(join(options.tempDir ?? tmpdir(), 'outpost-artifact-'));
        file = await open(join(dir, 'body'), 'w');
        for (const held of chunks.splice(0)) await file.write(held);
      }
      await file.write(chunk);
    }
  } catch (err) {
    await cleanup();
    throw err;
  }
  if (!file) return bodyOf(Buffer.concat(chunks, inMemory));
  await file.close();
  file = undefined;
  const path = join(dir!, 'body');
  let disposing: Promise<void> | undefined;
  const dispose = () => {
    disposing ??= cleanup();
    return disposing;
  };
  return {
    size,
    stream() {
      const stream = createReadStream(path);
      stream.once('close', () => void dispose());
      return stream;
    },
    dispose,
  };
}
