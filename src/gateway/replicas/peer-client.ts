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

/** A peer's answer whose body may come in two parts (see {@link PeerClient.postAnswered}). */
interface AnsweredResponse extends PeerResponse {
  /**
   * Only for a 200 `application/x-ndjson` answer (a replica of an earlier version answers plain JSON, in one part):
   * its second JSON line, once it comes; undefined when the answer ends without one, breaks, or takes longer than the
   * `restTimeoutMs` given. Never rejects.
   */
  rest?: Promise<unknown>;
}

/** Calls other replicas. */
export interface PeerClient {
  /** POSTs `body` as JSON to `baseUrl + path`; rejects on network errors and on timeout. */
  post(baseUrl: string, path: string, body: unknown): Promise<PeerResponse>;
  /**
   * POSTs like {@link post}, for an answer in two parts on one call: resolves with the first JSON line (or the whole
   * body when it is not `application/x-ndjson`) under the same deadline as `post`, then waits up to `restTimeoutMs`
   * more for the second line ({@link AnsweredResponse.rest}). Calls waiting for their second part never queue behind
   * each other for a connection: each holds its own until answered.
   */
  postAnswered(baseUrl: string, path: string, body: unknown, restTimeoutMs: number): Promise<AnsweredResponse>;
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
  // Calls answered in two parts hold their connection until the second part: without a socket limit, so a first
  // part is never delayed behind other calls' waits (which would make a forward look unanswered).
  const answeredHttpAgent = new http.Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY, maxFreeSockets: 64 });
  const answeredHttpsAgent = new https.Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY, maxFreeSockets: 64, ca });
  const maxBytes = options.maxResponseBytes ?? 1024 * 1024;
  // A two-part answer carries an operation result (the relay route takes bodies of up to 4 MiB).
  const maxAnswerBytes = Math.max(maxBytes, 8 * 1024 * 1024);

  async function request(baseUrl: string, path: string, body: unknown) {
    const url = new URL(path, baseUrl);
    const payload = Buffer.from(JSON.stringify(body));
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'content-length': String(payload.length),
    };
    if (options.signer) headers.authorization = `Bearer ${await options.signer.token()}`;
    return { url, payload, headers, secure: url.protocol === 'https:' };
  }

  return {
    async post(baseUrl, path, body) {
      const { url, payload, headers, secure } = await request(baseUrl, path, body);
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

    async postAnswered(baseUrl, path, body, restTimeoutMs) {
      const { url, payload, headers, secure } = await request(baseUrl, path, body);
      let settleRest!: (value: unknown) => void;
      const rest = new Promise<unknown>((resolve) => (settleRest = resolve));
      return new Promise<AnsweredResponse>((resolve, reject) => {
        let first = false;
        const fail = (err: Error) => {
          if (!first) reject(err);
          settleRest(undefined);
        };
        const parse = (text: string) => {
          try {
            return text ? JSON.parse(text) : undefined;
          } catch {
            return undefined;
          }
        };
        const req = (secure ? https : http).request(
          url,
          { method: 'POST', headers, agent: secure ? answeredHttpsAgent : answeredHttpAgent, timeout: options.timeoutMs },
          (res) => {
            const status = res.statusCode ?? 0;
            const lines = status === 200 && String(res.headers['content-type'] ?? '').startsWith('application/x-ndjson');
            let buffered = '';
            let size = 0;
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => {
              size += Buffer.byteLength(chunk);
              if (size > maxAnswerBytes) {
                req.destroy(new Error(`response of ${url.origin}${path} exceeds ${maxAnswerBytes} bytes`));
                return;
              }
              buffered += chunk;
              if (!lines) return;
              for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
                const line = buffered.slice(0, nl);
                buffered = buffered.slice(nl + 1);
                if (!first) {
                  first = true;
                  // The first part came in time; the second may take as long as the operation does.
                  req.setTimeout(restTimeoutMs);
                  resolve({ status, body: parse(line), rest });
                } else {
                  settleRest(parse(line));
                }
              }
            });
            res.on('end', () => {
              if (!first) {
                first = true;
                resolve({ status, body: parse(buffered) });
              }
              settleRest(undefined);
            });
            res.on('error', fail);
            res.on('aborted', () => fail(new Error(`the answer of ${url.origin}${path} broke off`)));
          },
        );
        req.on('timeout', () =>
          req.destroy(new Error(`no answer from ${url.origin} within ${first ? restTimeoutMs : options.timeoutMs} ms`)),
        );
        req.on('error', fail);
        req.on('close', () => settleRest(undefined));
        req.end(payload);
      });
    },

    close() {
      httpAgent.destroy();
      httpsAgent.destroy();
      answeredHttpAgent.destroy();
      answeredHttpsAgent.destroy();
    },
  };
}
