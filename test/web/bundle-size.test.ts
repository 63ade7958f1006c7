/**
 * The dashboard's weight: everything the built page loads (scripts and styles under web/dist/assets, gzip as served
 * over the network) stays under 250 KB, and the chart library is a chunk of its own, loaded with the first chart —
 * so `npm run build` lists its size on its own line.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { describe, test } from 'node:test';
import { ensureWebBuild } from '../../src/demo/web-build.js';
import { createSilentLogger } from '../../src/shared/logger.js';

const LIMIT_BYTES = 250 * 1024;
const ASSETS = fileURLToPath(new URL('../../web/dist/assets', import.meta.url));

describe('dashboard bundle size', () => {
  test('under 250 KB gzip in all, with uPlot in its own chunk', async () => {
    assert.notEqual(await ensureWebBuild(createSilentLogger()), 'unavailable', 'the dashboard builds');
    const files = readdirSync(ASSETS).filter((f) => f.endsWith('.js') || f.endsWith('.css'));
    const sizes = files.map((f) => ({ file: f, gzip: gzipSync(readFileSync(join(ASSETS, f)), { level: 9 }).length }));
    const total = sizes.reduce((sum, s) => sum + s.gzip, 0);
    assert.ok(total < LIMIT_BYTES, `the dashboard weighs ${Math.round(total / 1024)} KB gzip: ${JSON.stringify(sizes)}`);
    const charts = sizes.filter((s) => /^uPlot\./.test(s.file));
    assert.equal(charts.length, 1, `one uPlot chunk among ${files.join(', ')}`);
    assert.ok(charts[0]!.gzip < 40 * 1024, `uPlot's chunk is ${charts[0]!.gzip} bytes gzip`);
  });
});
