/**
 * The fixed regression cases: generated cases that once found a bug, named by the seed, case count and index that
 * produce them, with the verdict they must get now that the bug is fixed. `hostile-input.test.ts` runs every one of
 * them on each run (they are deterministic, whatever the run's own seed), and `npm run hostile -- --fixed` runs them
 * alone. A new finding joins the list with its fix, and the table in docs/hostile-input.md.
 */
import type { CaseVerdict } from './hostile-case.js';
import { generateCase, type IndexedCase } from './hostile-cases.js';
import type { HostileReport } from './hostile-runner.js';

/** One case that found a bug. */
interface FixedCase {
  seed: number;
  /** The run's case count (the same seed and index with another count is another case). */
  cases: number;
  index: number;
  /** The driver it was found on; it runs on whichever driver the run uses. */
  foundOn: 'pglite' | 'postgres';
  /** What it found, and where that was fixed. */
  bug: string;
  /** The verdict it must get now. */
  expect: CaseVerdict['kind'];
}

/** Every fixed regression case, oldest first. */
const FIXED_CASES: readonly FixedCase[] = [
  {
    seed: 638696507,
    cases: 1000,
    index: 159,
    foundOn: 'postgres',
    bug:
      'an applied Deployment with replicas 2147483648 was stored by the sandbox API server, whose ReplicaSet controller ' +
      'then created pods in one synchronous loop: the process (gateway included) passed 1.5 GB and stopped answering ' +
      '(src/sandbox/validate.ts: counts outside int32 are 400; src/sandbox/store.ts: a pod capacity)',
    expect: 'typed',
  },
  {
    seed: 485352027,
    cases: 5000,
    index: 3750,
    foundOn: 'postgres',
    bug:
      'an accounts_changed adding account "\\ufeffbom" was accepted and stored account "bom": protobuf-es decoded the ' +
      'string without its leading U+FEFF (src/shared/protobuf-text.ts keeps it, so the name is refused)',
    expect: 'typed',
  },
  {
    seed: 485352027,
    cases: 5000,
    index: 4600,
    foundOn: 'postgres',
    bug:
      'a Connect GET over HTTP/2 with a 70 000-character query got RST_STREAM REFUSED_STREAM from Node before the ' +
      'gateway saw it; the suite counted that as a failure (raw-http.ts: a typed refusal of a header list over 64 KiB)',
    expect: 'typed',
  },
];

/**
 * The fixed cases, generated (each from its own seed and count), as the runner takes them: indexed by their position
 * in {@link FIXED_CASES}, since two of them may share an index of their own runs.
 */
export function fixedCases(): IndexedCase[] {
  return FIXED_CASES.map((fixed, position) => {
    const found = generateCase(fixed.seed, fixed.cases, fixed.index);
    if (!found) throw new Error(`fixed case ${fixedCaseName(fixed)} does not exist`);
    return { index: position, hostileCase: found.hostileCase };
  });
}

/** What is wrong with a run of {@link fixedCases}: every fixed case whose verdict is not the one it must get. */
export function fixedCaseProblems(report: HostileReport): string[] {
  const problems: string[] = [];
  FIXED_CASES.forEach((fixed, position) => {
    const verdict = report.verdicts.get(position);
    if (verdict?.kind !== fixed.expect)
      problems.push(
        `${fixedCaseName(fixed)} must be ${fixed.expect}, got ${verdict ? `${verdict.kind}: ${verdict.detail}` : 'no verdict (the run stopped)'}`,
      );
  });
  return problems;
}

/** A name for a fixed case in messages: `seed 638696507, 1000 cases, case 159`. */
function fixedCaseName(fixed: FixedCase): string {
  return `seed ${fixed.seed}, ${fixed.cases} cases, case ${fixed.index}`;
}
