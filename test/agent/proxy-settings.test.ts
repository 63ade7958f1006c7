import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { AgentConfigError, parseAgentConfig } from '../../src/agent/index.js';
import { matchesNoProxy, parseProxyUrl, ProxyUrlError, proxyFor } from '../../src/agent/stream/proxy-settings.js';

const gateway = new URL('https://gateway.example.com:9091');
const plainGateway = new URL('http://gateway.example.com:9091');
const href = (url: URL | undefined) => url?.href;

describe('proxyFor', () => {
  test('clouddriver.proxy wins over the environment; without either, no proxy', () => {
    const env = { HTTPS_PROXY: 'http://env-proxy:3128' };
    assert.equal(href(proxyFor(gateway, { proxy: 'http://config-proxy:8080' }, env)), 'http://config-proxy:8080/');
    assert.equal(href(proxyFor(gateway, {}, env)), 'http://env-proxy:3128/');
    assert.equal(proxyFor(gateway, {}, {}), undefined);
    assert.equal(proxyFor(gateway, { proxy: '  ' }, {}), undefined);
  });

  test('the environment variable follows the scheme of the target; lowercase wins; empty counts as unset', () => {
    const env = { HTTPS_PROXY: 'http://upper-s:1', https_proxy: 'http://lower-s:2', HTTP_PROXY: 'http://upper:3' };
    assert.equal(href(proxyFor(gateway, {}, env)), 'http://lower-s:2/');
    assert.equal(href(proxyFor(new URL('wss://gw.example.com'), {}, env)), 'http://lower-s:2/');
    assert.equal(href(proxyFor(plainGateway, {}, env)), 'http://upper:3/');
    assert.equal(href(proxyFor(new URL('ws://gw.example.com'), {}, { ...env, http_proxy: 'http://lower:4' })), 'http://lower:4/');
    assert.equal(href(proxyFor(gateway, {}, { https_proxy: '', HTTPS_PROXY: 'http://upper-s:1' })), 'http://upper-s:1/');
    assert.equal(proxyFor(plainGateway, {}, { HTTPS_PROXY: 'http://upper-s:1' }), undefined, 'HTTPS_PROXY is not for http targets');
    assert.equal(proxyFor(gateway, {}, { ALL_PROXY: 'http://all:1' }), undefined, 'ALL_PROXY is not read');
  });

  test('a value without a scheme is http://; credentials are kept (percent-encoded)', () => {
    assert.equal(href(proxyFor(gateway, {}, { HTTPS_PROXY: 'proxy.corp:3128' })), 'http://proxy.corp:3128/');
    const url = proxyFor(gateway, { proxy: 'http://us%40er:p%3Ass@proxy:3128' }, {})!;
    assert.equal(decodeURIComponent(url.username), 'us@er');
    assert.equal(decodeURIComponent(url.password), 'p:ss');
  });

  test('noProxy true disables every proxy; a noProxy string replaces NO_PROXY and applies to either source', () => {
    const env = { HTTPS_PROXY: 'http://env-proxy:3128', NO_PROXY: 'gateway.example.com' };
    assert.equal(proxyFor(gateway, { noProxy: true }, { HTTPS_PROXY: 'http://env-proxy:3128' }), undefined);
    assert.equal(proxyFor(gateway, { noProxy: true, proxy: 'http://p:1' }, {}), undefined);
    assert.equal(proxyFor(gateway, {}, env), undefined, 'NO_PROXY from the environment');
    assert.equal(proxyFor(gateway, { proxy: 'http://p:1' }, env), undefined, 'NO_PROXY also bypasses clouddriver.proxy');
    assert.equal(href(proxyFor(gateway, { noProxy: 'other.example' }, env)), 'http://env-proxy:3128/', 'the config list replaces NO_PROXY');
    assert.equal(href(proxyFor(gateway, { noProxy: '' }, env)), 'http://env-proxy:3128/', 'an empty list excludes nothing');
    assert.equal(href(proxyFor(gateway, { noProxy: false }, { HTTPS_PROXY: 'http://e:1' })), 'http://e:1/');
    assert.equal(proxyFor(gateway, {}, { HTTPS_PROXY: 'http://e:1', no_proxy: '*', NO_PROXY: 'nothing' }), undefined, 'no_proxy first');
  });

  test('malformed proxy URLs fail with the source named and the password hidden', () => {
    const cases: [string, RegExp][] = [
      ['http://user:s3cret@proxy', /^HTTPS_PROXY: no proxy port.*got "http:\/\/\*\*\*@proxy"/],
      ['https://proxy:3128', /^HTTPS_PROXY: https:\/\/ proxies \(TLS to the proxy\) are not supported/],
      ['socks5://proxy:1080', /^HTTPS_PROXY: unsupported proxy scheme "socks5"/],
      ['http://proxy:3128/path', /^HTTPS_PROXY: a proxy URL has no path/],
      ['http://user:s3cret@proxy:99999', /^HTTPS_PROXY: not a valid URL.*got "http:\/\/\*\*\*@proxy:99999"/],
      ['http://user:%zz@proxy:1', /^HTTPS_PROXY: the user name or password is not valid percent-encoding/],
    ];
    for (const [value, expected] of cases) {
      assert.throws(
        () => proxyFor(gateway, {}, { HTTPS_PROXY: value }),
        (err: Error) => err instanceof ProxyUrlError && expected.test(err.message) && !err.message.includes('s3cret'),
        value,
      );
    }
    assert.throws(() => proxyFor(gateway, { proxy: 'http://proxy' }, {}), /^ProxyUrlError: clouddriver\.proxy: no proxy port/);
    assert.equal(proxyFor(gateway, {}, { HTTPS_PROXY: 'http://bad', NO_PROXY: '*' }), undefined, 'an unused value is not checked');
    assert.equal(parseProxyUrl('http://[::1]:3128', 'x').hostname, '[::1]');
  });
});

describe('NO_PROXY matching', () => {
  const cases: [string, string, boolean][] = [
    ['https://gateway.example.com', '*', true],
    ['https://gateway.example.com', 'gateway.example.com', true],
    ['https://GATEWAY.example.com.', 'gateway.EXAMPLE.com', true],
    ['https://gateway.example.com', 'example.com', true],
    ['https://example.com', '.example.com', true],
    ['https://a.b.example.com', '*.example.com', true],
    ['https://notexample.com', 'example.com', false],
    ['https://example.com.evil', 'example.com', false],
    ['https://gateway.example.com', 'other.com, , example.org gateway.example.com', true],
    ['https://gateway.example.com:9091', 'gateway.example.com:9091', true],
    ['https://gateway.example.com:9092', 'gateway.example.com:9091', false],
    ['https://gateway.example.com', 'gateway.example.com:443', true],
    ['http://gateway.example.com', 'gateway.example.com:443', false],
    ['https://10.1.2.3:9091', '10.1.2.3', true],
    ['https://10.1.2.3:9091', '10.0.0.0/8', true],
    ['https://11.1.2.3:9091', '10.0.0.0/8', false],
    ['https://10.1.2.3:9091', '10.0.0.0/8:9091', true],
    ['https://[::1]:9091', '::1', true],
    ['https://[::1]:9091', '[0:0:0:0:0:0:0:1]:9091', true],
    ['https://[::1]:9091', '[::1]:9092', false],
    ['https://[fd00::5]', 'fd00::/8', true],
    ['https://10.1.2.3', 'fd00::/8, 10.1.2.4, 10.0.0.0/99', false],
    ['https://gateway.example.com', '', false],
  ];
  for (const [target, list, expected] of cases) {
    test(`${target} ${expected ? 'is' : 'is not'} excluded by "${list}"`, () => {
      assert.equal(matchesNoProxy(new URL(target), list), expected);
    });
  }
});

describe('clouddriver.proxy and clouddriver.noProxy in the configuration', () => {
  const issues = (clouddriver: Record<string, unknown>) => {
    try {
      parseAgentConfig({ clouddriver }, {});
    } catch (err) {
      assert.ok(err instanceof AgentConfigError);
      return err.issues.map((i) => `${i.path}: ${i.message}`);
    }
    return [];
  };

  test('valid values load unchanged', () => {
    const config = parseAgentConfig({ clouddriver: { proxy: 'http://u:p@proxy.corp:3128', noProxy: '.svc,10.0.0.0/8' } }, {});
    assert.equal(config.clouddriver.proxy, 'http://u:p@proxy.corp:3128');
    assert.equal(config.clouddriver.noProxy, '.svc,10.0.0.0/8');
    assert.equal(parseAgentConfig({ clouddriver: { noProxy: true } }, {}).clouddriver.noProxy, true);
  });

  test('bad values are rejected under their key, the password hidden', () => {
    assert.deepEqual(issues({ proxy: 'proxy.corp:3128' }), [
      'clouddriver.proxy: expected a URL with a scheme: http://[user:password@]host:port',
    ]);
    assert.match(issues({ proxy: 'http://u:s3cret@proxy.corp' })[0]!, /^clouddriver\.proxy: no proxy port.*\*\*\*@proxy\.corp/);
    assert.match(issues({ proxy: 'https://proxy.corp:443' })[0]!, /^clouddriver\.proxy: https:\/\/ proxies .* are not supported/);
    assert.ok(!issues({ proxy: 'http://u:s3cret@proxy.corp' })[0]!.includes('s3cret'));
    assert.deepEqual(issues({ proxy: 'http://proxy.corp:3128', noProxy: true }), [
      'clouddriver.noProxy: noProxy: true disables the proxy that `proxy` sets; remove one of them',
    ]);
    assert.equal(issues({ noProxy: 3 }).length, 1);
  });
});
