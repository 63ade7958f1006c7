/**
 * docs/networks.md shows the nginx, HAProxy and ingress-nginx configurations that testkit/reverse-proxy-configs.ts
 * generates — the text testkit/nginx.ts and testkit/haproxy.ts run with real nginx and HAProxy
 * (test/testkit/reverse-proxies.test.ts) — here with the page's addresses, so the page cannot drift from what is tested.
 * The error messages its table quotes are the ones test/gateway/grpc-through-http1-proxies.test.ts asserts.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { haproxyConfig, ingressNginxManifest, nginxSiteConfig, STREAM_IDLE_TIMEOUT_SECONDS } from '../../testkit/reverse-proxy-configs.js';
import { fencedBlocks, readDoc, ROOT } from './doc-blocks.js';

const page = readDoc('docs/networks.md');

/** The text of the block marked `<!-- snippet: NAME -->`, which must be the only one. */
function snippet(name: string): string {
  const blocks = fencedBlocks(page).filter((b) => b.marker === `snippet: ${name}`);
  assert.equal(blocks.length, 1, `one block marked "snippet: ${name}"`);
  return blocks[0]!.text;
}

test('the nginx configuration on the page is the one the nginx harness runs', () => {
  const expected = nginxSiteConfig({
    listen: '443',
    upstream: 'gateway.internal.example.com:7002',
    tls: { certFile: '/etc/nginx/tls/outpost.crt', keyFile: '/etc/nginx/tls/outpost.key' },
  });
  assert.equal(snippet('nginx'), expected);
});

test('the HAProxy configuration on the page is the one the HAProxy harness runs', () => {
  const expected = haproxyConfig({
    bind: ':443',
    upstream: 'gateway.internal.example.com:7002',
    tlsPemFile: '/etc/haproxy/certs/outpost.pem',
  });
  assert.equal(snippet('haproxy'), expected);
});

test('the ingress-nginx Ingress on the page: the generated text, to the HTTP Service of deploy/gateway/base', () => {
  const text = snippet('ingress-nginx');
  assert.equal(
    text,
    ingressNginxManifest({ host: 'outpost.example.com', tlsSecret: 'outpost-http-tls', service: 'spin-clouddriver', port: 'http' }),
  );
  const ingress = parseYaml(text) as any;
  assert.deepEqual(ingress.metadata.annotations, {
    'nginx.ingress.kubernetes.io/backend-protocol': 'HTTP',
    'nginx.ingress.kubernetes.io/proxy-read-timeout': String(STREAM_IDLE_TIMEOUT_SECONDS),
    'nginx.ingress.kubernetes.io/proxy-send-timeout': String(STREAM_IDLE_TIMEOUT_SECONDS),
  });
  const service = parseYaml(readFileSync(`${ROOT}deploy/gateway/base/service-http.yaml`, 'utf8')) as any;
  const backend = ingress.spec.rules[0].http.paths[0].backend.service;
  assert.equal(backend.name, service.metadata.name);
  assert.ok(
    service.spec.ports.some((p: { name: string; port: number }) => p.name === backend.port.name && p.port === 7002),
    'the Service has the port named in the Ingress, 7002',
  );
});

test('the error messages the page quotes are the ones the gateway test asserts', () => {
  const gatewayTest = readFileSync(`${ROOT}test/gateway/grpc-through-http1-proxies.test.ts`, 'utf8');
  for (const message of ['Protocol error', 'tlsv1 alert no application protocol', 'HTTP 426']) {
    assert.ok(page.includes(message), `the page quotes "${message}"`);
    assert.ok(gatewayTest.includes(message), `test/gateway/grpc-through-http1-proxies.test.ts asserts "${message}"`);
  }
});
