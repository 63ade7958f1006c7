/**
 * A Connect interceptor refusing request messages whose strings (or map keys) hold a NUL character or a lone UTF-16
 * surrogate, with INVALID_ARGUMENT: Postgres refuses NUL in `text` and `jsonb` and an escaped lone surrogate in
 * `jsonb`, so such a value would otherwise fail inside a query and surface as INTERNAL. Unary requests are checked
 * before the handler runs, streamed ones message by message. The agent stream is left to its own validation.
 */
import type { Interceptor } from '@connectrpc/connect';
import { findUnstorableText } from '../../shared/unstorable-text.js';
import { invalidArgument } from '../http/errors.js';

function check(message: unknown): void {
  const problem = findUnstorableText(message, 'request');
  if (problem) throw invalidArgument(problem);
}

async function* checked<T>(messages: AsyncIterable<T>): AsyncIterable<T> {
  for await (const message of messages) {
    check(message);
    yield message;
  }
}

/** Creates the interceptor; put it after authentication so that unauthenticated callers learn nothing. */
export function createUnstorableTextGuard(): Interceptor {
  return (next) => async (req) => {
    // The agent stream validates its own messages (hello-validation.ts, event-decoder.ts), in every protocol alike.
    if (req.service.typeName === 'outpost.agent.v1.AgentService') return next(req);
    if (!req.stream) {
      check(req.message);
      return next(req);
    }
    return next({ ...req, message: checked(req.message) });
  };
}
