import { Code, ConnectError } from '@connectrpc/connect';

/**
 * One line describing a failed call: the Connect code in words and the server's own message (rawMessage, without
 * the "[code]" prefix ConnectError adds to `message`). PermissionDenied reads as such: the token is valid but lacks
 * the role, so signing in again would not help.
 */
export function describeError(error: unknown): string {
  if (error === undefined || error === null) return '';
  const e = ConnectError.from(error);
  const text = e.rawMessage || Code[e.code];
  switch (e.code) {
    case Code.PermissionDenied:
      return `Permission denied: ${text}`;
    case Code.Unauthenticated:
      return `Not signed in: ${text}`;
    case Code.Unavailable:
      return `Gateway unavailable: ${text}`;
    case Code.NotFound:
      return `Not found: ${text}`;
    case Code.InvalidArgument:
      return `Invalid argument: ${text}`;
    default:
      return `${Code[e.code] ?? 'Error'}: ${text}`;
  }
}

/**
 * An error paragraph announced to screen readers. `context` says what failed ("Could not load accounts").
 * Renders nothing when `error` is empty, so callers can pass the query's error unconditionally.
 */
export function ErrorMessage({ error, context }: { error: unknown; context: string }) {
  if (error === undefined || error === null) return null;
  return (
    <p class="error" role="alert">
      {context}. {describeError(error)}
    </p>
  );
}
