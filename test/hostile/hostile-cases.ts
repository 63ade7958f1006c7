/**
 * The hostile-input generator: from a seed and a number of cases, the same list of cases every time — each category
 * gets its share (at least one), each case its own PRNG stream (`<category>#<n>`, so one case can be rerun alone and
 * adding a category changes no other case), and the list is interleaved so concurrent batches mix slow and fast cases.
 */
import { createRng, type Rng } from '../../testkit/rng.js';
import { AGENT_CONFIG_CASES } from './cases/agent-config-cases.js';
import { AGENT_STREAM_ORDER_CASES } from './cases/agent-stream-order-cases.js';
import { AGENT_STREAM_WIRE_CASES } from './cases/agent-stream-wire-cases.js';
import { MANIFEST_CASES } from './cases/manifest-cases.js';
import { REST_CASES } from './cases/rest-cases.js';
import { RPC_CASES } from './cases/rpc-cases.js';
import { HOSTILE_CATEGORIES, type HostileCase, type HostileCategory } from './hostile-case.js';

/** Every category's case factory. */
const FACTORIES: Record<HostileCategory, (rng: Rng) => HostileCase> = {
  ...AGENT_STREAM_WIRE_CASES,
  ...AGENT_STREAM_ORDER_CASES,
  ...RPC_CASES,
  ...REST_CASES,
  ...AGENT_CONFIG_CASES,
  ...MANIFEST_CASES,
};

/** A generated case and its position in the run (what `--case` selects). */
export interface IndexedCase {
  index: number;
  hostileCase: HostileCase;
}

/** How many cases each category gets out of `total` (by weight, at least one each). */
export function allocate(total: number): Map<HostileCategory, number> {
  const categories = Object.keys(HOSTILE_CATEGORIES) as HostileCategory[];
  const weight = categories.reduce((n, c) => n + HOSTILE_CATEGORIES[c], 0);
  const counts = new Map(categories.map((c) => [c, Math.max(1, Math.floor((total * HOSTILE_CATEGORIES[c]) / weight))]));
  let left = total - [...counts.values()].reduce((a, b) => a + b, 0);
  for (let i = 0; left > 0; i = (i + 1) % categories.length, left--) counts.set(categories[i]!, counts.get(categories[i]!)! + 1);
  return counts;
}

/** The cases of a run: deterministic for (`seed`, `total`). */
export function generateCases(seed: number, total: number): IndexedCase[] {
  const root = createRng(seed);
  const cases: HostileCase[] = [];
  for (const [category, count] of allocate(total)) {
    for (let n = 0; n < count; n++) cases.push(FACTORIES[category](root.fork(`${category}#${n}`)));
  }
  const order = root.fork('order');
  for (let i = cases.length - 1; i > 0; i--) {
    const j = order.int(0, i);
    [cases[i], cases[j]] = [cases[j]!, cases[i]!];
  }
  return cases.map((hostileCase, index) => ({ index, hostileCase }));
}
