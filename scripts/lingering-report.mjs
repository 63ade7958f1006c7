// Loaded with `--import` into a test process by scripts/find-lingering.mjs (and scripts/test-shard.mjs imports it):
// on SIGUSR2 it prints what keeps the process alive — live handles and active resources, then the hottest functions
// of a 3-second CPU profile — to stderr, each line starting with `lingering:` or two spaces. A signal listener keeps
// nothing alive, and nothing is profiled unless asked.
import { Session } from 'node:inspector/promises';

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

function describeHandle(h) {
  const name = h?.constructor?.name ?? typeof h;
  const where = h?.remoteAddress
    ? ` ${h.localPort}→${h.remoteAddress}:${h.remotePort}`
    : h?.address?.()?.port
      ? ` :${h.address().port}`
      : '';
  return `${name}${where}`;
}

async function report() {
  const handles = process._getActiveHandles().map(describeHandle);
  const lines = [
    `lingering: live handles: ${handles.join(', ') || 'none'}`,
    `lingering: active resources: ${process.getActiveResourcesInfo().join(', ') || 'none'}`,
  ];
  const session = new Session();
  try {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
    await new Promise((r) => setTimeout(r, 3000));
    const { profile } = await session.post('Profiler.stop');
    lines.push('lingering: hottest functions over 3 s:', ...hottest(profile, 15));
  } catch (err) {
    lines.push(`lingering: no CPU profile: ${err.message}`);
  } finally {
    session.disconnect();
  }
  process.stderr.write(`${lines.join('\n')}\n`);
}

process.on('SIGUSR2', () => void report());
// When the JS exit event ran: a process that lingers after this line is held by a worker thread or a native handle,
// not by the event loop (and a SIGUSR2 then finds no listener).
process.on('exit', (code) => process.stderr.write(`test-shard: exit event (code ${code}) at ${new Date().toISOString()}\n`));
