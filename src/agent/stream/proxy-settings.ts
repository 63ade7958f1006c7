/**
 * Which HTTP forward proxy, if any, the agent dials to reach the gateway: `clouddriver.proxy`, else the standard
 * environment variables, minus the hosts of the exclusion list. Pure functions (the environment is a parameter), so
 * the rules are unit-tested without touching `process.env`.
 *
 * The rules, in order:
 * 1. `clouddriver.noProxy: true` → no proxy at all.
 * 2. The proxy is `clouddriver.proxy` when set; otherwise, for an `https:`/`wss:` target, `https_proxy` then
 *    `HTTPS_PROXY`, for an `http:`/`ws:` target, `http_proxy` then `HTTP_PROXY` (the lowercase name wins when both are
 *    set, like curl; an empty value counts as unset; `ALL_PROXY` is not read).
 * 3. The exclusion list is `clouddriver.noProxy` when it is a string (it replaces the environment's), else `no_proxy`
 *    then `NO_PROXY`. It applies to the proxy from either source, like curl's `--noproxy`. See {@link matchesNoProxy}.
 */
import net from 'node:net';

/** A proxy URL that cannot be used; the message names where it came from (without its password). */
export class ProxyUrlError extends Error {
  override name = 'ProxyUrlError';
}

/** The proxy inputs of `clouddriver`: `proxy` (a URL) and `noProxy` (`true`, or a NO_PROXY-style list). */
export interface ProxySettings {
  proxy?: string;
  noProxy?: string | boolean;
}

/** The port a URL of this scheme means when it names none. */
function defaultPort(protocol: string): number {
  return protocol === 'https:' || protocol === 'wss:' ? 443 : 80;
}

/** The text with any `user:password@` replaced by `***@`, for messages about a value that did not parse. */
function redact(text: string): string {
  return text.replace(/^([a-z][a-z0-9+.-]*:\/\/)?[^/?#@]*@/i, (_all, scheme: string | undefined) => `${scheme ?? ''}***@`);
}

/**
 * `http://user@host:port` for messages and logs: the proxy without its password (the user name helps tell which
 * credentials were refused).
 */
export function describeProxy(proxy: URL): string {
  const user = proxy.username ? `${proxy.username}@` : '';
  return `${proxy.protocol}//${user}${proxy.host}`;
}

/**
 * Parses and checks a proxy URL: `http://[user:password@]host:port`, with an explicit port (proxies listen on all
 * sorts of ports, and curl and Node's clients disagree on the default). A value without a scheme is read as `http://`
 * (what curl does with `HTTPS_PROXY=proxy:3128`). `https://` proxies (TLS to the proxy itself) are refused: the
 * tunnel already carries TLS end to end to the gateway. `source` names where the text came from (`clouddriver.proxy`,
 * `HTTPS_PROXY`) and starts every error message. Throws {@link ProxyUrlError}.
 */
export function parseProxyUrl(text: string, source: string): URL {
  const trimmed = text.trim();
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed) ? trimmed : `http://${trimmed}`;
  const fail = (why: string) => new ProxyUrlError(`${source}: ${why} (got "${redact(trimmed)}")`);
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw fail('not a valid URL; expected http://[user:password@]host:port');
  }
  if (url.protocol === 'https:') {
    throw fail(
      'https:// proxies (TLS to the proxy) are not supported; use the http:// address of the proxy — the tunnel through it still carries TLS to the gateway',
    );
  }
  if (url.protocol !== 'http:') throw fail(`unsupported proxy scheme "${url.protocol.slice(0, -1)}"; expected http://host:port`);
  if (url.hostname === '') throw fail('no proxy host; expected http://host:port');
  const authority = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/i.exec(withScheme)![1]!;
  const hostPort = authority.slice(authority.lastIndexOf('@') + 1);
  if (!/:\d+$/.test(hostPort)) throw fail('no proxy port; give it explicitly, e.g. http://proxy.example.com:3128');
  if ((url.pathname !== '/' && url.pathname !== '') || url.search !== '' || url.hash !== '') {
    throw fail('a proxy URL has no path, query or fragment; expected http://host:port');
  }
  try {
    decodeURIComponent(url.username);
    decodeURIComponent(url.password);
  } catch {
    throw fail('the user name or password is not valid percent-encoding');
  }
  return url;
}

/** The host of a URL without IPv6 brackets or a trailing dot, lowercase. */
function bareHost(hostname: string): string {
  return hostname
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '')
    .toLowerCase();
}

/**
 * Whether `target` is excluded by a NO_PROXY-style list: entries separated by commas or spaces, case-insensitive,
 * matched against the target's host as written (no DNS lookup):
 * - `*` excludes everything;
 * - `example.com`, `.example.com` and `*.example.com` all exclude example.com and every name under it (curl's rule);
 * - an IP address excludes that address; `10.0.0.0/8` or `fd00::/8` excludes the addresses in that range;
 * - any of these with `:port` (`[::1]:443` for IPv6) only excludes that port (the scheme's default when the URL
 *   names none).
 */
export function matchesNoProxy(target: URL, list: string): boolean {
  const host = bareHost(target.hostname);
  const port = Number(target.port) || defaultPort(target.protocol);
  const hostIp = net.isIP(host);
  for (const raw of list.split(/[\s,]+/)) {
    let entry = raw.trim().toLowerCase();
    if (entry === '') continue;
    if (entry === '*') return true;
    const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
    const withPort = bracketed ? undefined : /^([^:]+):(\d+)$/.exec(entry);
    const entryPort = bracketed?.[2] ?? withPort?.[2];
    if (bracketed) entry = bracketed[1]!;
    else if (withPort) entry = withPort[1]!;
    if (entryPort !== undefined && Number(entryPort) !== port) continue;
    const cidr = /^([0-9a-f:.]+)\/(\d{1,3})$/.exec(entry);
    if (cidr) {
      const family = net.isIP(cidr[1]!);
      if (family === 0 || hostIp !== family) continue;
      const blocks = new net.BlockList();
      try {
        blocks.addSubnet(cidr[1]!, Number(cidr[2]), family === 4 ? 'ipv4' : 'ipv6');
      } catch {
        continue; // a prefix length out of range matches nothing
      }
      if (blocks.check(host, family === 4 ? 'ipv4' : 'ipv6')) return true;
      continue;
    }
    if (net.isIP(entry)) {
      if (hostIp !== 0 && ipEquals(entry, host)) return true;
      continue;
    }
    const domain = entry.replace(/^\*?\.?/, '').replace(/\.$/, '');
    if (domain !== '' && (host === domain || host.endsWith(`.${domain}`))) return true;
  }
  return false;
}

/** Two IP literals denote the same address (`::1` and `0:0:0:0:0:0:0:1`). */
function ipEquals(a: string, b: string): boolean {
  const family = net.isIP(a);
  if (family !== net.isIP(b)) return false;
  const blocks = new net.BlockList();
  blocks.addAddress(a, family === 4 ? 'ipv4' : 'ipv6');
  return blocks.check(b, family === 4 ? 'ipv4' : 'ipv6');
}

/** The first non-empty variable among `names`, with its name. */
function firstSet(env: NodeJS.ProcessEnv, names: string[]): { name: string; value: string } | undefined {
  for (const name of names) {
    const value = env[name]?.trim();
    if (value) return { name, value };
  }
  return undefined;
}

/**
 * The proxy to dial for `target` (the gateway URL: `https:`/`wss:` or `http:`/`ws:`), or undefined to dial it
 * directly — see the module comment for the rules. Call it for every connection attempt if the environment may
 * change; it is cheap. Throws {@link ProxyUrlError} when the proxy that applies is malformed (an unused variable is
 * not checked); treat that as a configuration error, not as a network failure to retry.
 */
export function proxyFor(target: URL, settings: ProxySettings, env: NodeJS.ProcessEnv = process.env): URL | undefined {
  if (settings.noProxy === true) return undefined;
  let chosen: { name: string; value: string } | undefined;
  if (settings.proxy !== undefined && settings.proxy.trim() !== '') {
    chosen = { name: 'clouddriver.proxy', value: settings.proxy };
  } else {
    const secure = target.protocol === 'https:' || target.protocol === 'wss:';
    chosen = firstSet(env, secure ? ['https_proxy', 'HTTPS_PROXY'] : ['http_proxy', 'HTTP_PROXY']);
  }
  if (chosen === undefined) return undefined;
  const list = typeof settings.noProxy === 'string' ? settings.noProxy : (firstSet(env, ['no_proxy', 'NO_PROXY'])?.value ?? '');
  if (matchesNoProxy(target, list)) return undefined;
  return parseProxyUrl(chosen.value, chosen.name);
}
