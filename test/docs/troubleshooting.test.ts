/**
 * docs/troubleshooting.md quotes the log lines users see. Every quoted line's `msg` must be one the code can write (it
 * matches a string or template literal of src/), and the lines marked `<!-- reproduced: ID -->` are produced for real
 * here — a gateway with the token and rule of deploy/gateway/base/gateway.yaml, two sandbox clusters, an HTTP/1.1
 * server, and real agents each misconfigured the way the page says — and must match the captured line (same fields,
 * same text once addresses, numbers and fingerprints are blanked).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { parseAgentConfig, startAgent, type RunningAgent } from '../../src/agent/index.js';
import { createEndpointsDirectory } from '../../src/gateway/replicas/endpoints-directory.js';
import { type GatewayConfig, startGateway, type RunningGateway } from '../../src/gateway/index.js';
import { testGatewayConfig } from '../../testkit/test-gateway.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { createLogger, createSilentLogger } from '../../src/shared/logger.js';
import { blocksOf, readDoc, ROOT } from './doc-blocks.js';

const PAGE = 'docs/troubleshooting.md';
const AGENT_TOKEN = 'token-of-agent-cluster-1-for-the-docs';

type LogLine = Record<string, unknown> & { msg: string };
const quoted = blocksOf(readDoc(PAGE), 'json')
  .map((b) => ({ marker: b.marker, line: JSON.parse(b.text) as LogLine }))
  .filter((q) => typeof q.line.msg === 'string');

/** Every string and template literal of src/ (tests and generated code left out), as full-match regexes. */
function sourceMessages(): RegExp[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir)) {
      const path = join(dir, entry);
      if (statSync(path).isDirectory()) {
        if (entry !== 'gen') walk(path);
      } else if (entry.endsWith('.ts') && !entry.endsWith('.test.ts')) files.push(path);
    }
  };
  walk(join(ROOT, 'src'));
  const out: RegExp[] = [];
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/'((?:[^'\\\n]|\\.)*)'|"((?:[^"\\\n]|\\.)*)"|`((?:[^`\\]|\\.)*)`/g)) {
      const literal = m[1] ?? m[2] ?? m[3] ?? '';
      // ${…} parts (braces may nest) become wildcards; too little fixed text would match anything.
      let pattern = '';
      let fixed = 0;
      for (let i = 0; i < literal.length; i++) {
        if (m[3] !== undefined && literal.startsWith('${', i)) {
          let depth = 0;
          for (; i < literal.length; i++) {
            if (literal[i] === '{') depth++;
            else if (literal[i] === '}' && --depth === 0) break;
          }
          pattern += '[\\s\\S]*?';
        } else {
          const ch = literal[i] === '\\' ? literal[++i]! : literal[i]!;
          pattern += ch.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
          fixed++;
        }
      }
      if (fixed >= 12) out.push(new RegExp(`^${pattern}$`));
    }
  }
  return out;
}

/** Blanks what differs between the page and a run: URLs, host:port, fingerprints, numbers. */
function normalize(msg: string): string {
  return msg
    .replace(/https?:\/\/[^\s)]+/g, 'URL')
    .replace(/ENOTFOUND [^\s;]+/g, 'ENOTFOUND HOST')
    .replace(/\b[0-9A-F]{8,16}:error:/g, 'HEX:error:') // OpenSSL's thread id
    .replace(/[\w.-]+:\d+/g, 'HOST')
    .replace(/\b[0-9a-f]{16}\b/g, 'HEX')
    .replace(/\d+(\.\d+)?/g, 'N');
}

describe('troubleshooting guide', () => {
  test('every quoted log line is one the code writes', () => {
    assert.ok(quoted.length >= 10, 'the page quotes its log lines');
    const messages = sourceMessages();
    const written = (text: string) => messages.some((re) => re.test(text));
    for (const { line } of quoted) {
      assert.ok(written(line.msg), `"${line.msg}" is written by src/`);
      // The reason of a connection failure, when the agent added a hint to it (after " — "), is checked on its own too.
      const reason = /: \[\w+\] (.* — .*); next retry in/.exec(line.msg)?.[1];
      if (reason !== undefined) assert.ok(written(reason), `the hint of "${reason}" is written by src/`);
      assert.equal(typeof line.level, 'number');
      assert.ok(line.name === 'agent' || line.name === 'gateway', `${line.msg}: the line names its program`);
    }
  });

  describe('the reproduced symptoms', () => {
    let dir: string;
    let gateway: RunningGateway;
    let gatewayConfig: GatewayConfig;
    let cluster1: Sandbox;
    let cluster2: Sandbox;
    let http1: http.Server;
    const gatewayLines: LogLine[] = [];
    const agents: RunningAgent[] = [];

    const capture = (into: LogLine[]) =>
      new Writable({
        write(chunk, _enc, done) {
          for (const l of chunk.toString().split('\n')) if (l.trim() !== '') into.push(JSON.parse(l) as LogLine);
          done();
        },
      });

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'outpost-troubleshooting-'));
      const config = (gatewayConfig = testGatewayConfig('memory://', {
        id: 'outpost-gateway-0',
        insecure: false,
        auth: { tokens: [{ subject: 'agent-cluster-1', token: AGENT_TOKEN }] },
        authorization: {
          rules: [{ kind: 'token', subject: '^agent-cluster-1$', roles: ['agent'], accounts: ['cluster-1', 'cluster-1-*'] }],
        },
      }));
      http1 = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>proxy</html>'));
      [gateway, cluster1, cluster2] = await Promise.all([
        startGateway(config, { logger: createLogger({ name: 'gateway', destination: capture(gatewayLines) }) }),
        startSandbox({ seed: 'demo', tls: true, logger: createSilentLogger() }),
        startSandbox({ seed: 'none', tls: true, logger: createSilentLogger() }),
        new Promise<void>((resolve) => http1.listen(0, '127.0.0.1', resolve)),
      ]);
      await cluster1.writeKubeconfig(join(dir, 'cluster-1'));
      await cluster2.writeKubeconfig(join(dir, 'cluster-2'));
    });

    after(async () => {
      await Promise.all(agents.map((a) => a.close()));
      http1?.closeAllConnections();
      http1?.close();
      await Promise.all([gateway?.close(), cluster1?.close(), cluster2?.close()]);
      rmSync(dir, { recursive: true, force: true });
    });

    /** Starts an agent as `outpost agent` would (logger named agent) and returns its captured lines. */
    async function agent(id: string, clouddriver: Record<string, unknown>, account: Record<string, unknown>): Promise<LogLine[]> {
      const lines: LogLine[] = [];
      const config = parseAgentConfig(
        {
          clouddriver: { grpc: new URL(gateway.grpcUrl).host, reconnect: { baseSeconds: 0.2, factor: 1, maxSeconds: 0.2 }, ...clouddriver },
          agent: { id },
          server: { port: 0 },
          prometheus: { enabled: false },
          kubernetes: { accounts: [account] },
        },
        {},
      );
      agents.push(await startAgent(config, { logger: createLogger({ name: 'agent', destination: capture(lines) }) }));
      return lines;
    }

    /** Waits for the line the page quotes under `<!-- reproduced: id -->` and compares the two. */
    async function expectQuoted(id: string, lines: LogLine[]): Promise<void> {
      const doc = quoted.find((q) => q.marker === `reproduced: ${id}`);
      assert.ok(doc, `${PAGE} quotes the line of "${id}"`);
      const want = normalize(doc.line.msg);
      const deadline = Date.now() + 30_000;
      let seen: LogLine | undefined;
      while (!(seen = lines.find((l) => normalize(l.msg) === want))) {
        if (Date.now() > deadline) assert.fail(`${id}: no line like\n  ${doc.line.msg}\namong\n  ${lines.map((l) => l.msg).join('\n  ')}`);
        await new Promise((r) => setTimeout(r, 25));
      }
      if (process.env.OUTPOST_DOCS_DUMP) console.log(id, JSON.stringify(seen));
      assert.deepEqual(Object.keys(doc.line).sort(), Object.keys(seen).sort(), `${id}: the quoted line has the fields of the real one`);
      assert.equal(doc.line.level, seen.level, `${id}: level`);
    }

    const token = { auth: { token: AGENT_TOKEN } };
    const cluster1Account = () => ({ name: 'cluster-1', kubeconfigFile: join(dir, 'cluster-1') });

    test('the agent cannot connect: wrong address, unknown host, TLS to a plaintext port, wrong or missing token, an HTTP/1.1 proxy', async () => {
      await Promise.all([
        // Port 1 (tcpmux) has no listener; a port found free and released could be anyone's by the time it is dialled.
        agent('a-closed', { ...token, grpc: '127.0.0.1:1' }, cluster1Account()).then((l) => expectQuoted('connection-refused', l)),
        agent('a-dns', { ...token, grpc: 'outpost-grpc.invalid:443' }, cluster1Account()).then((l) => expectQuoted('unknown-host', l)),
        agent('a-tls', { ...token, insecure: false }, cluster1Account()).then((l) => expectQuoted('tls-to-plaintext', l)),
        agent('a-token', { auth: { token: 'not-the-token-the-gateway-knows' } }, cluster1Account()).then((l) =>
          expectQuoted('wrong-token', l),
        ),
        agent('a-none', {}, cluster1Account()).then((l) => expectQuoted('no-token', l)),
        agent(
          'a-http1',
          { ...token, transport: 'grpc', grpc: `127.0.0.1:${(http1.address() as AddressInfo).port}` },
          cluster1Account(),
        ).then((l) => expectQuoted('http1-proxy', l)),
      ]);
    });

    test('RBAC: forbidden kinds are skipped and reported; a name bound to another cluster and a name outside the identity are refused', async () => {
      // cluster-1 through a service account that may not list everything: registered, cached, kinds skipped.
      const first = await agent('outpost-agent-7c9f-1', token, { ...cluster1Account(), context: 'sandbox-restricted' });
      await expectQuoted('rbac-skipped', first);
      await expectQuoted('welcomed', first);
      // Another cluster claims the name cluster-1: refused, on both sides.
      const second = await agent('outpost-agent-5d2a-1', token, { name: 'cluster-1', kubeconfigFile: join(dir, 'cluster-2') });
      await expectQuoted('bound-elsewhere', second);
      await expectQuoted('gateway-refused', gatewayLines);
      // The token's rule allows cluster-1 and cluster-1-*, not prod.
      const third = await agent('outpost-agent-5d2a-2', token, { name: 'prod', kubeconfigFile: join(dir, 'cluster-2') });
      await expectQuoted('identity-refused', third);
    });

    test('RBAC on the gateway side: replica discovery without the right to watch Endpoints', async () => {
      const lines: LogLine[] = [];
      const logger = createLogger({ name: 'gateway', destination: capture(lines) }).child({ gatewayId: 'outpost-gateway-0' });
      const directory = createEndpointsDirectory({
        config: { ...gatewayConfig.replicas, namespace: 'outpost', kubeconfigFile: join(dir, 'cluster-1'), context: 'sandbox-restricted' },
        scheme: 'http',
        logger,
      });
      try {
        await directory.start();
        await expectQuoted('endpoints-forbidden', lines);
      } finally {
        await directory.close();
      }
    });
  });
});
