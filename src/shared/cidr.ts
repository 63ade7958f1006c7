/**
 * Networks in CIDR form, as configuration lists them (the artifact accounts' allowed private networks): parsed once
 * by the config schema and again by the policy that applies them.
 */
import { isIP } from 'node:net';

/** A network in CIDR form: `10.1.0.0/16`, `127.0.0.1/32`, `fd00::/8`. */
export interface Cidr {
  address: string;
  prefix: number;
  family: 'ipv4' | 'ipv6';
}

/** Parses `address/prefix`; undefined when it is not one (the config schema reports it). */
export function parseCidr(text: string): Cidr | undefined {
  const m = /^([^/\s]+)\/(\d{1,3})$/.exec(text.trim());
  if (!m) return undefined;
  const version = isIP(m[1]!);
  const prefix = Number(m[2]);
  if (version === 0 || prefix > (version === 4 ? 32 : 128)) return undefined;
  return { address: m[1]!, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}
