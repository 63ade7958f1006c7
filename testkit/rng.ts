/**
 * A small seeded pseudo-random generator (mulberry32) for the randomized suites (chaos, hostile input): the same seed
 * gives the same sequence of choices, so a failing run can be rerun with the seed it printed. Not for cryptography.
 */

/** A seeded source of random choices. */
export interface Rng {
  readonly seed: number;
  /** Uniform in [0, 1). */
  next(): number;
  /** Integer in [min, max] (both included). */
  int(min: number, max: number): number;
  /** One element of a non-empty array. */
  pick<T>(items: readonly T[]): T;
  /** True with probability `p`. */
  chance(p: number): boolean;
  /** A new generator whose sequence depends only on this one's seed and `label` (stable sub-streams). */
  fork(label: string): Rng;
}

/** A seed from the environment variable `name` when set (a rerun), else a fresh one. */
export function seedFrom(name: string): number {
  const text = process.env[name];
  if (text !== undefined && text !== '') {
    const seed = Number(text);
    if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) throw new Error(`${name} must be an integer in [0, 2^32): got ${text}`);
    return seed;
  }
  return Math.floor(Math.random() * 0xffffffff);
}

/** Creates a generator from a 32-bit seed. */
export function createRng(seed: number): Rng {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const rng: Rng = {
    seed,
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick: (items) => {
      if (items.length === 0) throw new Error('pick from an empty array');
      return items[Math.floor(next() * items.length)]!;
    },
    chance: (p) => next() < p,
    fork: (label) => {
      let h = seed ^ 0x9e3779b9;
      for (let i = 0; i < label.length; i++) h = Math.imul(h ^ label.charCodeAt(i), 0x01000193) >>> 0;
      return createRng(h >>> 0);
    },
  };
  return rng;
}
