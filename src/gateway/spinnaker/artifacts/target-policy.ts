/**
 * Where the gateway may fetch artifacts from (docs/spinnaker.md, "Artifacts"): a URL Orca or Rosco hands over must not
 * turn the gateway into a proxy to what only the gateway can reach. Every host is resolved once, each address is
 * checked, and the connection goes to the checked address (bounded-fetch.ts pins it), so a name that resolves to a
 * public address when checked and to 127.0.0.1 when connecting (DNS rebinding) still reaches the checked one.
 *
 * Refused unless the account lists the network in `allowedPrivateNetworks`: loopback, link-local (cloud metadata at
 * 169.254.169.254 included), unspecified, private (RFC 1918, unique local), shared (CGNAT), multicast, broadcast and
 * reserved ranges, IPv4-mapped IPv6 forms of all of these, and the NAT64 and 6to4 prefixes that embed IPv4 addresses.
 */
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { parseCidr } from '../../../shared/cidr.js';

const REFUSED_V4: [string, number][] = [
  ['0.0.0.0', 8], // "this network", the unspecified address
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // shared address space (CGNAT)
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
];
const REFUSED_V6: [string, number][] = [
  ['::', 128], // unspecified
  ['::1', 128],
  ['64:ff9b::', 96], // NAT64
  ['64:ff9b:1::', 48],
  ['100::', 64], // discard
  ['2001:db8::', 32],
  ['2002::', 16], // 6to4
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
];

const refused = new BlockList();
for (const [address, prefix] of REFUSED_V4) refused.addSubnet(address, prefix, 'ipv4');
for (const [address, prefix] of REFUSED_V6) refused.addSubnet(address, prefix, 'ipv6');

/** Which addresses one account may connect to. */
export interface TargetPolicy {
  /** Undefined when `address` may be connected to, else why not (for the error message). */
  refusal(address: string): string | undefined;
}

/** The policy of an account: public addresses, plus the non-public networks it lists. */
export function createTargetPolicy(allowedPrivateNetworks: readonly string[]): TargetPolicy {
  const allowed = new BlockList();
  for (const text of allowedPrivateNetworks) {
    const cidr = parseCidr(text);
    if (!cidr) throw new Error(`not a network in CIDR form: ${JSON.stringify(text)}`);
    allowed.addSubnet(cidr.address, cidr.prefix, cidr.family);
  }
  return {
    refusal(address) {
      const version = isIP(address);
      if (version === 0) return `${address} is not an IP address`;
      const family = version === 4 ? 'ipv4' : 'ipv6';
      if (!refused.check(address, family) || allowed.check(address, family)) return undefined;
      return `${address} is a loopback, link-local, private or reserved address, which this artifact account may not fetch from (allowedPrivateNetworks)`;
    },
  };
}

/** A host resolved and checked: connect to `address` (and only to it) for `hostname`. */
export interface CheckedTarget {
  hostname: string;
  address: string;
  family: 4 | 6;
}

/**
 * Resolves `hostname` once (an IP literal as itself) and returns the first address the policy allows; throws a
 * {@link TargetRefused} naming the refused address when none is allowed. The caller must connect to the returned
 * address, not resolve the name again.
 */
export async function checkTarget(hostname: string, policy: TargetPolicy): Promise<CheckedTarget> {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  const literal = isIP(bare);
  const addresses = literal ? [{ address: bare, family: literal }] : await lookup(bare, { all: true, verbatim: true });
  let firstRefusal = `${hostname} resolves to no address`;
  for (const [i, { address, family }] of addresses.entries()) {
    const why = policy.refusal(address);
    if (why === undefined) return { hostname: bare, address, family: family === 6 ? 6 : 4 };
    if (i === 0) firstRefusal = `${hostname}: ${why}`;
  }
  throw new TargetRefused(firstRefusal);
}

/** A target the account may not reach: answered 403-free, as a bad request (the artifact names it). */
export class TargetRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TargetRefused';
  }
}
