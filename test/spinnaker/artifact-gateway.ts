/**
 * What the artifact suites share: a gateway (embedded PGlite, ephemeral ports, its JSON log lines captured) with
 * `spinnaker.artifacts` from the test, secured with a token of the `spinnaker` role (and one of `read`, which must
 * not open the artifact routes); and small HTTP helpers that call it as Orca does.
 */
import { tokenGateway } from '../../testkit/token-gateway.js';
import { PassThrough } from 'node:stream';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { z } from 'zod';
import { startGateway, type RunningGateway } from '../../src/gateway/index.js';
import { testGatewayConfig } from '../../testkit/test-gateway.js';
import type { artifactsSchema } from '../../src/gateway/config/artifacts-schema.js';
import { createLogger } from '../../src/shared/logger.js';

const ORCA_TOKEN = 'orca-token-0123456789abcdef';
export const READER_TOKEN = 'reader-token-0123456789abcdef';

/** A running gateway with captured logs. */
export interface ArtifactGateway {
  gateway: RunningGateway;
  baseUrl: string;
  /** Every log line written so far (JSON text). */
  logs(): string;
  /** PUT /artifacts/fetch/ as Orca sends it (Orca's token unless `token` says otherwise). */
  fetchArtifact(artifact: unknown, options?: { path?: string; token?: string }): Promise<{ status: number; body: Buffer; type: string }>;
  /** GET with Orca's token; the body parsed as JSON when it is. */
  get(path: string, token?: string): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

/** Starts the gateway; `artifacts` is the `spinnaker.artifacts` section. */
export async function startArtifactGateway(artifacts: z.input<typeof artifactsSchema> = {}): Promise<ArtifactGateway> {
  const out = new PassThrough();
  let text = '';
  out.on('data', (chunk: Buffer) => {
    text += chunk.toString();
  });
  const config = testGatewayConfig('memory://', {
    id: 'gw-artifacts',
    logLevel: 'debug',
    ...tokenGateway(
      [
        { subject: 'orca', token: ORCA_TOKEN, roles: ['spinnaker'], accounts: ['k8s-*'] },
        { subject: 'reader', token: READER_TOKEN, roles: ['read'], accounts: [] },
      ],
      'authenticated',
    ),
    spinnaker: { artifacts },
  });
  const gateway = await startGateway(config, { logger: createLogger({ level: 'debug', destination: out }) });
  const baseUrl = gateway.httpUrl;
  return {
    gateway,
    baseUrl,
    logs: () => text,
    async fetchArtifact(artifact, options = {}) {
      const res = await fetch(`${baseUrl}${options.path ?? '/artifacts/fetch/'}`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${options.token ?? ORCA_TOKEN}` },
        body: typeof artifact === 'string' ? artifact : JSON.stringify(artifact),
      });
      return { status: res.status, body: Buffer.from(await res.arrayBuffer()), type: res.headers.get('content-type') ?? '' };
    },
    async get(path, token = ORCA_TOKEN) {
      const res = await fetch(`${baseUrl}${path}`, { headers: { authorization: `Bearer ${token}` } });
      const raw = await res.text();
      let body: any = raw;
      try {
        body = JSON.parse(raw);
      } catch {}
      return { status: res.status, body };
    },
    close: () => gateway.close(),
  };
}

/** The Spring error body of a failed fetch. */
export function springError(body: Buffer): { status: number; error: string; message: string; path: string } {
  return JSON.parse(body.toString('utf8'));
}

/** A test HTTP server on 127.0.0.1, port 0; `url` has the bound port. */
export interface TestServer {
  url: string;
  port: number;
  /** Requests seen, in order (method, URL and headers). */
  requests: { method: string; url: string; headers: IncomingMessage['headers'] }[];
  close(): Promise<void>;
}

/** Serves `handler` on 127.0.0.1 at an ephemeral port. */
export async function startTestServer(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<TestServer> {
  const requests: TestServer['requests'] = [];
  const server: Server = createServer((req, res) => {
    requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
