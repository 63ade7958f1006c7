/**
 * HTTP client for the internal routes replicas call on each other (`POST /armory/agent/forwardedoperations`,
 * `POST /armory/agent/operationresults`): JSON bodies, keep-alive connections (a forwarded operation must not pay a
 * TCP or TLS handshake), a replica token when `auth.replicaSecretFile` is set, and a deadline per call. HTTPS peers
 * are verified against `replicas.peerCaFile`, else `tls.caFile`, else the system CAs.
 */
import http from 'node:http';
import https from 'node:https';
import { readFileSync } from 'node:fs';
import type { ReplicaTokenSigner } from '../auth/replica-token.js';

/** A peer's answer: HTTP status and parsed JSON body (undefined when not JSON). */
export interface PeerResponse {
  status: number;
  body: unknown;
}

/** Calls other replicas. */
export interface PeerClient {
  /** POSTs `body` as JSON to `baseUrl + path`; rejects on network errors and on timeout. */
  post(baseUrl: string, path: string, body: unknown): Promise<PeerResponse>;
  /** Closes idle keep-alive connections. */
  close(): void;
}

/** Options of {@link createPeerClient}. */
export interface PeerClientOptions {
  /** Signs the replica token sent as a bearer token; without it calls go unauthenticated (insecure dev mode). */
  signer?: ReplicaTokenSigner;
  /** PEM CA bundle for HTTPS peers. */
  caFile?: string;
  timeoutMs: number;
  /** Largest response body read. */
  maxResponseBytes?: number;
}

/** Creates the client; reads `caFile` now (a missing file fails start-up). */
export function createPeerClient(options: PeerClientOptions): PeerClient {
  const ca = options.caFile ? readFileSync(options.caFile) : undefined;
  const httpAgent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const httpsAgent = new https.Agent({ keepAlive: true, maxSockets: 64, ca });
  const maxBytes = options.maxResponseBytes ?? 1024 * 1024;
  return {
    async post(baseUrl, path, body) {
      const url = new URL(path, baseUrl);
      const payload = Buffer.from(JSON.stringify(body));
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'content-length': String(payload.length),
      };
      if (options.signer) headers.authorization = `Bearer ${await options.signer.token()}`;
      const secure = url.protocol === 'https:';
      return new Promise<PeerResponse>((resolve, reject) => {
        const req = (secure ? https : http).request(
          url,
          { method: 'POST', headers, agent: secure ? httpsAgent : httpAgent, timeout: options.timeoutMs },
          (res) => {
            const chunks: Buffer[] = [];
            let size = 0;
            res.on('data', (chunk: Buffer) => {
              size += chunk.length;
              if (size > maxBytes) {
                req.destroy(new Error(`response of ${url.origin}${path} exceeds ${maxBytes} bytes`));
                return;
              }
              chunks.push(chunk);
            });
            res.on('end', () => {
              const text = Buffer.concat(chunks).toString('utf8');
              let parsed: unknown;
              try {
                parsed = text ? JSON.parse(text) : undefined;
              } catch {
                parsed = undefined;
              }
              resolve({ status: res.statusCode ?? 0, body: parsed });
            });
            res.on('error', reject);
          },
        );
        req.on('timeout', () => req.destroy(new Error(`no answer from ${url.origin} within ${options.timeoutMs} ms`)));
        req.on('error', reject);
        req.end(payload);
      });
    },
    close() {
      httpAgent.destroy();
      httpsAgent.destroy();
    },
  };
}
