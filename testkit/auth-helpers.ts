/**
 * What tests of a secured gateway share (the gateway's authentication suite, the CLI's, the docs' mTLS guide, end-to-end
 * kubectl and WebSocket tests): a throw-away PKI written to files, a gateway started with TLS and
 * auth settings, and real clients over sockets — gRPC (HTTP/2 + TLS), REST over HTTPS/1.1 and over HTTP/2 — that
 * report the outcome (status code and message) instead of throwing.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import http2 from 'node:http2';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { create } from '@bufbuild/protobuf';
import { Code, ConnectError, createClient } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { AgentService, ConnectRequestSchema } from '../src/gen/outpost/agent/v1/agent_pb.js';
import { ObjectService } from '../src/gen/outpost/api/v1/object_service_pb.js';
import { AccountService } from '../src/gen/outpost/api/v1/account_service_pb.js';
import type { GatewayConfigInput } from '../src/gateway/index.js';
import { createCertificateAuthority, createClientCertificate } from '../src/sandbox/certs.js';
import { hello } from './test-agent-stream.js';
import { startTestGateway, type TestGateway } from './test-gateway.js';

export { Code };

/** A client identity: PEM strings (any may be missing) and a bearer token. */
export interface ClientIdentity {
  ca?: string;
  cert?: string;
  key?: string;
  token?: string;
  /** Raw Authorization header (overrides token). */
  authorization?: string;
}

/** Files and PEMs of a test PKI. */
export interface TestPki {
  dir: string;
  caFile: string;
  certFile: string;
  keyFile: string;
  caPem: string;
  /** Client certificates signed by the gateway's CA. */
  agent1: { certPem: string; keyPem: string };
  intruder: { certPem: string; keyPem: string };
  /** A client certificate named agent-1 but signed by another CA. */
  foreign: { certPem: string; keyPem: string };
  /** Writes a file into the PKI directory and returns its path. */
  write(name: string, text: string): string;
  remove(): void;
}

/** Creates a CA with a server certificate for 127.0.0.1, client certificates, and one from a foreign CA. */
export async function createTestPki(): Promise<TestPki> {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-auth-'));
  const ca = await createCertificateAuthority();
  const other = await createCertificateAuthority();
  const write = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  return {
    dir,
    caFile: write('ca.pem', ca.caPem),
    certFile: write('server.pem', ca.certPem),
    keyFile: write('server-key.pem', ca.keyPem),
    caPem: ca.caPem,
    agent1: await createClientCertificate(ca, 'agent-1', 'agents'),
    intruder: await createClientCertificate(ca, 'intruder', 'elsewhere'),
    foreign: await createClientCertificate(other, 'agent-1', 'agents'),
    write,
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Starts a gateway on PGlite with `insecure: false` unless overridden. */
export function startAuthGateway(overrides: GatewayConfigInput): Promise<TestGateway> {
  return startTestGateway('pglite', { insecure: false, ...overrides });
}

/** Outcome of a call: `ok` or the gRPC code and message. */
export interface CallOutcome {
  code: Code | 'ok';
  message: string;
}

function headersOf(id: ClientIdentity): Record<string, string> {
  if (id.authorization) return { authorization: id.authorization };
  return id.token ? { authorization: `Bearer ${id.token}` } : {};
}

function transportFor(baseUrl: string, id: ClientIdentity) {
  return createGrpcTransport({
    baseUrl,
    nodeOptions: baseUrl.startsWith('https') ? { ca: id.ca, cert: id.cert, key: id.key } : {},
  });
}

async function outcome(run: () => Promise<unknown>): Promise<CallOutcome> {
  try {
    await run();
    return { code: 'ok', message: '' };
  } catch (err) {
    const e = ConnectError.from(err);
    return { code: e.code, message: e.rawMessage };
  }
}

/** `ObjectService.ListObjects` (requires read) over gRPC. */
export function grpcRead(grpcUrl: string, id: ClientIdentity): Promise<CallOutcome> {
  const client = createClient(ObjectService, transportFor(grpcUrl, id));
  return outcome(() => client.listObjects({}, { headers: headersOf(id), timeoutMs: 30_000 }));
}

/** `AccountService.DeleteAccounts` with no names (requires admin) over gRPC. */
export function grpcAdmin(grpcUrl: string, id: ClientIdentity): Promise<CallOutcome> {
  const client = createClient(AccountService, transportFor(grpcUrl, id));
  return outcome(() => client.deleteAccounts({}, { headers: headersOf(id), timeoutMs: 30_000 }));
}

/**
 * Opens `AgentService.Connect` (requires agent), sends a Hello and reads the first response: `ok` when it is a
 * Welcome, the stream's error otherwise.
 */
export function grpcAgentStream(grpcUrl: string, id: ClientIdentity, account = 'prod-1'): Promise<CallOutcome> {
  const client = createClient(AgentService, transportFor(grpcUrl, id));
  const abort = new AbortController();
  const requests = (async function* () {
    yield create(ConnectRequestSchema, { message: hello('auth-test-agent', [{ name: account }]) } as never);
    await new Promise((resolve) => abort.signal.addEventListener('abort', resolve));
  })();
  return outcome(async () => {
    try {
      for await (const res of client.connect(requests, { headers: headersOf(id), signal: abort.signal, timeoutMs: 30_000 })) {
        if (res.message.case === 'welcome') return;
        if (res.message.case !== 'heartbeat') throw new Error(`expected a welcome, got ${res.message.case}`);
      }
      throw new Error('stream ended without a welcome');
    } finally {
      abort.abort();
    }
  });
}

/** Status and parsed JSON body of a REST call. */
export interface RestOutcome {
  status: number;
  body: { error?: string; message?: string } & Record<string, unknown>;
}

/** A REST call over HTTP/1.1 (https:// or http://), one connection per call. */
export function restCall(baseUrl: string, method: string, path: string, id: ClientIdentity, body?: unknown): Promise<RestOutcome> {
  const url = new URL(path, baseUrl);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const options: https.RequestOptions = {
    method,
    agent: false,
    headers: { ...headersOf(id), ...(payload ? { 'content-type': 'application/json' } : {}) },
    ...(url.protocol === 'https:' ? { ca: id.ca, cert: id.cert, key: id.key } : {}),
  };
  return new Promise((resolve, reject) => {
    const req = (url.protocol === 'https:' ? https : http).request(url, options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: parse(Buffer.concat(chunks).toString('utf8')) }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** A REST call over HTTP/2 with TLS (ALPN h2), one session per call. */
export function restCallH2(
  baseUrl: string,
  method: string,
  path: string,
  id: ClientIdentity,
): Promise<RestOutcome & { alpn: string | false | undefined }> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(baseUrl, { ca: id.ca, cert: id.cert, key: id.key });
    session.on('error', reject);
    const req = session.request({ ':method': method, ':path': path, ...headersOf(id) });
    let status = 0;
    const chunks: Buffer[] = [];
    req.on('response', (h) => (status = Number(h[':status'])));
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const alpn = session.alpnProtocol;
      session.close();
      resolve({ status, alpn, body: parse(Buffer.concat(chunks).toString('utf8')) });
    });
    req.on('error', reject);
    req.end();
  });
}

function parse(text: string): RestOutcome['body'] {
  try {
    return JSON.parse(text) as RestOutcome['body'];
  } catch {
    return { raw: text };
  }
}
