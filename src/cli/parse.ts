/**
 * Argument parsers shared by the commands, so every command rejects bad numbers the same way.
 */
import { InvalidArgumentError } from 'commander';
import { paceProblem } from '../shared/sandbox-pace.js';

/** Parses a TCP port (0–65535; 0 picks a free one). */
export function parsePort(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 65535) throw new InvalidArgumentError(`not a port number: ${value}`);
  return n;
}

/**
 * Parses a delay of the sandbox's pace in milliseconds: a whole number from 0 to the longest timer (about 24.8 days),
 * refused as `startSandbox` refuses it.
 */
export function parseMilliseconds(value: string): number {
  const n = Number(value);
  const problem = /^\s*-?\d+(\.\d*)?\s*$/.test(value) ? paceProblem(n) : 'must be a whole number of milliseconds';
  if (problem) throw new InvalidArgumentError(`not a delay in milliseconds: ${value} (${problem})`);
  return n;
}
