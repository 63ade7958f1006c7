/**
 * The vocabulary of the hostile-input suite: a case (one generated input sent to one surface), its verdict (a typed
 * error, an acceptance of input that happened to be valid, or a failure of the system under test), and the
 * categories the suite reports on. Generators build cases from a seeded PRNG; the runner executes them.
 */
import type { HostileTarget } from './hostile-target.js';
import { isTransportRefusal, StreamResetError } from './raw-http.js';

/** What one case ended with. */
export type CaseVerdict =
  /** Refused with a typed error (a ConnectError code other than UNKNOWN, or a REST 4xx with a JSON body). */
  | { kind: 'typed'; detail: string; code?: string }
  /** The input happened to be valid and was served. */
  | { kind: 'accepted'; detail: string }
  /** The system under test misbehaved: untyped error, 5xx, unjustified INTERNAL, crash, hang, wrong error type. */
  | { kind: 'failure'; detail: string };

/** The result of running a case. */
export interface CaseResult {
  verdict: CaseVerdict;
  /**
   * Names (account names, agent ids, operation ids) whose database rows this case may legitimately have changed:
   * those of an accepted input, or of the valid prefix of a stream whose later message was refused. The database
   * check ignores rows keyed by these names from now on; every other row must be unchanged.
   */
  owned?: readonly string[];
}

/** One generated input and how to send it. */
export interface HostileCase {
  /** One of {@link HOSTILE_CATEGORIES}. */
  readonly category: HostileCategory;
  /** What was generated, short enough for a failure line ("ListObjects connect-json: bit flip ×3"). */
  readonly name: string;
  /** Sends the input and judges the outcome. Must not throw: unexpected errors are failures. */
  run(target: HostileTarget): Promise<CaseResult>;
}

/** The categories, in the order the summary lists them, with their share of the cases of a run. */
export const HOSTILE_CATEGORIES = {
  'agent stream: random bytes': 5,
  'agent stream: mutated hello': 8,
  'agent stream: framing': 6,
  'agent stream: headers': 4,
  'agent stream: message order': 8,
  'rpc: mutated JSON': 14,
  'rpc: mutated protobuf': 12,
  'rpc: protocol': 8,
  'rest: bodies': 12,
  'rest: paths': 12,
  'agent config': 6,
  manifests: 5,
} as const;

/** A category name. */
export type HostileCategory = keyof typeof HOSTILE_CATEGORIES;

/** A verdict of a typed error. */
export function typed(detail: string, code?: string): CaseResult {
  return { verdict: { kind: 'typed', detail, code } };
}

/** A verdict of an accepted input. */
export function accepted(detail: string, owned?: readonly string[]): CaseResult {
  return { verdict: { kind: 'accepted', detail }, owned };
}

/** A verdict of a failure of the system under test. */
export function failure(detail: string): CaseResult {
  return { verdict: { kind: 'failure', detail } };
}

/** Runs a case body, turning anything it throws (a hang, a dropped connection, a bug in the case) into a failure. */
export async function guarded(via: string, run: () => Promise<CaseResult>): Promise<CaseResult> {
  try {
    return await run();
  } catch (err) {
    // HTTP/2's refusals of a flooding peer and of an oversized header list are typed answers of the transport (see
    // StreamResetError); other resets fail
    if (err instanceof StreamResetError && isTransportRefusal(err)) {
      const code = err.rstCode === StreamResetError.ENHANCE_YOUR_CALM ? 'ENHANCE_YOUR_CALM' : 'REFUSED_STREAM';
      return typed(`${via}: RST_STREAM ${code} (header list ${err.headerListBytes} bytes)`, `HTTP/2 ${code}`);
    }
    return failure(`${via}: ${(err as Error).name}: ${(err as Error).message}`);
  }
}

/** Makes text usable as an HTTP header value (node refuses control characters and code points above 0xff). */
export function headerSafe(text: string): string {
  return text.replace(/[^\t\x20-\x7e\x80-\xff]/g, '?');
}
