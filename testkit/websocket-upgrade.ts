/**
 * A raw WebSocket upgrade, for tests of what the gateway answers before any WebSocket exists: the HTTP status and
 * body of a refused upgrade, or 101 when it opened (the socket is then dropped at once).
 */
import { WebSocket } from 'ws';

/** Opens `url` with `protocols` and `headers` (TLS material when wss); resolves with the answer. */
export function upgradeAnswer(
  url: string,
  protocols: string[],
  headers: Record<string, string> = {},
  tls: { ca?: string; cert?: string; key?: string } = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, protocols, { headers, ...tls });
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString('utf8')));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    ws.on('open', () => {
      ws.terminate();
      resolve({ status: 101, body: '' });
    });
    ws.on('error', (err) => reject(err));
  });
}
