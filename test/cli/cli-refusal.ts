/**
 * The CliError a client function refused with, for the CLI tests that check refusals of the credential and sign-in
 * code directly (not through a command run).
 */
import assert from 'node:assert/strict';
import { CliError } from '../../src/client/errors.js';

/** Awaits `promise`, which must reject with a CliError; returns that error. */
export async function refusal(promise: Promise<unknown>): Promise<CliError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof CliError, String(err));
    return err;
  }
  assert.fail('expected a refusal');
}
