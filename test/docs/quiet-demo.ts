/**
 * The demo as the documentation tests run it: every port bound to 0, an in-memory database, no log output. The page's
 * commands then have their addresses substituted from the returned demo.
 */
import { join } from 'node:path';
import { type RunningDemo, startDemo } from '../../src/demo/run-demo.js';
import { createSilentLogger } from '../../src/shared/logger.js';

/** Starts the demo with its files under `dir`/demo; the caller stops it. */
export function startQuietDemo(dir: string): Promise<RunningDemo> {
  return startDemo({
    dir: join(dir, 'demo'),
    sandboxPort: 0,
    httpPort: 0,
    grpcPort: 0,
    agentPort: 0,
    database: 'memory://',
    logger: createSilentLogger(),
  });
}
