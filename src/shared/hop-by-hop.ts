/**
 * Hop-by-hop headers (RFC 9110 7.6.1, and the proxy ones): they describe one connection and are never passed on by a
 * proxy — the gateway's and the agent's sides of the Kubernetes API proxy drop them alike.
 */
export const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
  'proxy-authenticate',
  'proxy-authorization',
]);
