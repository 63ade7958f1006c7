#!/usr/bin/env node
// One shard of the test suite (started by scripts/run-tests.mjs as `node --import tsx --test-reporter=spec
// scripts/test-shard.mjs FILE...`): imports each test file in turn, which registers its tests with node:test in this
// process; they then run one file after another, as each would alone. Not meant to be run by hand.
//
// A shard was seen spinning at 100% CPU after its last test, never exiting (run-tests.mjs kills it 30 s after its
// summary). To find what keeps it alive, run-tests.mjs sends SIGUSR2 to a shard still alive 12 s after its summary:
// the shard then prints its live handles and a 3-second CPU profile's hottest functions to stderr. (A signal
// listener does not keep the process alive, and nothing is profiled unless asked.)
import { Session } from 'node:inspector/promises';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The hottest functions of a CPU profile, by self time, as printable lines. */
function hottest(profile, count) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const totals = new Map();
  for (const [id, us] of self) {
    const f = byId.get(id).callFrame;
    const key = `${f.functionName || '(anonymous)'} ${f.url}:${f.lineNumber + 1}`;
    totals.set(key, (totals.get(key) ?? 0) + us);
  }
  return [...totals]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([key, us]) => `  ${(us / 1000).toFixed(0)} ms  ${key}`);
}

async function reportLingering() {
  const handles = process._getActiveHandles().map((h) => {
    const name = h?.constructor?.name ?? typeof h;
    const where = h?.remoteAddress
      ? ` ${h.localPort}→${h.remoteAddress}:${h.remotePort}`
      : h?.address?.()?.port
        ? ` :${h.address().port}`
        : '';
    return `${name}${where}`;
  });
  const lines = [`test-shard: still running after its summary; live handles: ${handles.join(', ') || 'none'}`];
  const session = new Session();
  try {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
    await new Promise((r) => setTimeout(r, 3000));
    const { profile } = await session.post('Profiler.stop');
    lines.push('test-shard: hottest functions over 3 s:', ...hottest(profile, 15));
  } catch (err) {
    lines.push(`test-shard: no CPU profile: ${err.message}`);
  } finally {
    session.disconnect();
  }
  process.stderr.write(`${lines.join('\n')}\n`);
}

process.on('SIGUSR2', () => void reportLingering());

for (const file of process.argv.slice(2)) await import(pathToFileURL(resolve(file)).href);
