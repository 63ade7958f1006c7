/**
 * Argument parsers shared by the commands, so every command rejects bad numbers the same way.
 */
import { InvalidArgumentError } from 'commander';

/** Parses a TCP port (0–65535; 0 picks a free one). */
export function parsePort(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 65535) throw new InvalidArgumentError(`not a port number: ${value}`);
  return n;
}

/** Parses a positive integer. */
export function parsePositiveInt(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n <= 0) throw new InvalidArgumentError(`not a positive integer: ${value}`);
  return n;
}
