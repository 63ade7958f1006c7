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
function allocate(total: number): Map<HostileCategory, number> {
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
  return slots(root, total).map(({ category, n }, index) => ({ index, hostileCase: FACTORIES[category](root.fork(`${category}#${n}`)) }));
}

/**
 * Case `index` of the run (`seed`, `total`), the same as {@link generateCases} gives, without building the others
 * (rerunning a fixed case of a 5000-case run must not cost the generation of 5000). Undefined past the end.
 */
export function generateCase(seed: number, total: number, index: number): IndexedCase | undefined {
  const root = createRng(seed);
  const slot = slots(root, total)[index];
  return slot && { index, hostileCase: FACTORIES[slot.category](root.fork(`${slot.category}#${slot.n}`)) };
}

/** Which case (category and number within it) sits at each position of a run: the allocation, shuffled. */
function slots(root: Rng, total: number): { category: HostileCategory; n: number }[] {
  const out: { category: HostileCategory; n: number }[] = [];
  for (const [category, count] of allocate(total)) for (let n = 0; n < count; n++) out.push({ category, n });
  // a case's stream depends only on the seed and its label, so the order can be drawn before any case is built
  const order = root.fork('order');
  for (let i = out.length - 1; i > 0; i--) {
    const j = order.int(0, i);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}
