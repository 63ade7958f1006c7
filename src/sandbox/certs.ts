/**
 * Throw-away PKI for the sandbox API server (and the gateway's mTLS tests): a self-signed CA, a server certificate
 * for loopback plus extra hosts, client certificates, and the CA fingerprint the agent reports. ECDSA P-256 keys,
 * SHA-256 signatures, generated with `@peculiar/x509` over Node's WebCrypto; PEM in and out (keys as PKCS#8).
 */
import { createHash, webcrypto } from 'node:crypto';
import { isIP } from 'node:net';
import type * as X509 from '@peculiar/x509';

const crypto = webcrypto as unknown as Crypto;
const KEY_ALG = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const SIGN_ALG = { name: 'ECDSA', hash: 'SHA-256' } as const;
const DAY = 24 * 60 * 60 * 1000;

let x509Module: Promise<typeof X509> | undefined;

/**
 * Loads `@peculiar/x509` on first use, so importing this file has no side effects. Its dependency tsyringe needs the
 * Reflect metadata API, so `reflect-metadata` is loaded first.
 */
function loadX509(): Promise<typeof X509> {
  x509Module ??= import('reflect-metadata').then(() => import('@peculiar/x509'));
  return x509Module;
}

/** The CA and a server certificate it signed, all PEM. Keep `caKeyPem` to issue client certificates later. */
export interface CertificateAuthority {
  /** CA certificate: what clients trust. */
  caPem: string;
  /** CA private key (PKCS#8): needed by {@link createClientCertificate}; never hand it to clients. */
  caKeyPem: string;
  /** Server certificate (SANs 127.0.0.1, ::1, localhost and the requested hosts). */
  certPem: string;
  /** Server private key (PKCS#8). */
  keyPem: string;
}

function randomSerial(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[0] &= 0x7f; // positive
  bytes[0] |= 0x01; // no leading zero byte
  return Buffer.from(bytes).toString('hex');
}

async function generateKeys(): Promise<CryptoKeyPair> {
  return (await crypto.subtle.generateKey(KEY_ALG, true, ['sign', 'verify'])) as CryptoKeyPair;
}

async function keyToPem(key: CryptoKey): Promise<string> {
  const der = Buffer.from(await crypto.subtle.exportKey('pkcs8', key)).toString('base64');
  return `-----BEGIN PRIVATE KEY-----\n${der.replace(/(.{64})/g, '$1\n').replace(/\n$/, '')}\n-----END PRIVATE KEY-----\n`;
}

function escapeDn(value: string): string {
  return value.replace(/([,+"\\<>;=])/g, '\\$1');
}

function validity(days: number): { notBefore: Date; notAfter: Date } {
  const now = Date.now();
  // backdate a little so freshly issued certificates are valid despite small clock differences
  return { notBefore: new Date(now - 60 * 60 * 1000), notAfter: new Date(now + days * DAY) };
}

/**
 * Creates a self-signed CA (valid 10 years) and a server certificate signed by it (valid 1 year) whose SANs are
 * 127.0.0.1, ::1, localhost plus `opts.hosts` (IP literals become IP SANs, other strings DNS SANs).
 */
export async function createCertificateAuthority(opts: { hosts?: string[] } = {}): Promise<CertificateAuthority> {
  const x509 = await loadX509();
  const caKeys = await generateKeys();
  const caCert = await x509.X509CertificateGenerator.createSelfSigned(
    {
      serialNumber: randomSerial(),
      name: 'CN=outpost-sandbox-ca,O=outpost',
      ...validity(3650),
      signingAlgorithm: SIGN_ALG,
      keys: caKeys,
      extensions: [
        new x509.BasicConstraintsExtension(true, 0, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
        await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey, false, crypto),
      ],
    },
    crypto,
  );

  const hosts = [...new Set(['127.0.0.1', '::1', 'localhost', ...(opts.hosts ?? [])])];
  for (const h of hosts) {
    if (typeof h !== 'string' || h.trim() === '') throw new Error('createCertificateAuthority: hosts must be non-empty strings');
  }
  const serverKeys = await generateKeys();
  const serverCert = await x509.X509CertificateGenerator.create(
    {
      serialNumber: randomSerial(),
      subject: 'CN=outpost-sandbox',
      issuer: caCert.subject,
      ...validity(365),
      signingAlgorithm: SIGN_ALG,
      publicKey: serverKeys.publicKey,
      signingKey: caKeys.privateKey,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth], false),
        new x509.SubjectAlternativeNameExtension(
          hosts.map((h) => (isIP(h) ? { type: 'ip' as const, value: h } : { type: 'dns' as const, value: h })),
          false,
        ),
        await x509.AuthorityKeyIdentifierExtension.create(caKeys.publicKey, false, crypto),
      ],
    },
    crypto,
  );

  return {
    caPem: `${caCert.toString('pem')}\n`,
    caKeyPem: await keyToPem(caKeys.privateKey),
    certPem: `${serverCert.toString('pem')}\n`,
    keyPem: await keyToPem(serverKeys.privateKey),
  };
}

/**
 * Issues a client certificate (valid 1 year, clientAuth) signed by the CA. As with Kubernetes client certificates,
 * `commonName` is the user name and `organization` the group. Throws when the CA key does not match the CA cert.
 */
export async function createClientCertificate(
  ca: { caPem: string; caKeyPem: string },
  commonName: string,
  organization?: string,
): Promise<{ certPem: string; keyPem: string }> {
  if (!commonName) throw new Error('createClientCertificate: commonName must be non-empty');
  const x509 = await loadX509();
  const caCert = new x509.X509Certificate(ca.caPem);
  const caKey = await crypto.subtle.importKey('pkcs8', x509.PemConverter.decodeFirst(ca.caKeyPem), KEY_ALG, false, ['sign']);
  const keys = await generateKeys();
  const subject = `CN=${escapeDn(commonName)}${organization ? `,O=${escapeDn(organization)}` : ''}`;
  const cert = await x509.X509CertificateGenerator.create(
    {
      serialNumber: randomSerial(),
      subject,
      issuer: caCert.subject,
      ...validity(365),
      signingAlgorithm: SIGN_ALG,
      publicKey: keys.publicKey,
      signingKey: caKey,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth], false),
        await x509.AuthorityKeyIdentifierExtension.create(caCert, false, crypto),
      ],
    },
    crypto,
  );
  if (!(await cert.verify({ publicKey: caCert.publicKey, signatureOnly: true }, crypto))) {
    throw new Error('createClientCertificate: the CA key does not belong to the CA certificate');
  }
  return { certPem: `${cert.toString('pem')}\n`, keyPem: await keyToPem(keys.privateKey) };
}

/**
 * Lowercase hex SHA-256 of the DER bytes of the first certificate in `pem` (no colons) — the fingerprint the agent
 * reports for its API server CA and the gateway binds account names to. Throws when `pem` holds no certificate.
 */
export function certificateFingerprint(pem: string): string {
  const m = /-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----/.exec(pem);
  if (!m) throw new Error('certificateFingerprint: no PEM certificate found');
  const der = Buffer.from(m[1].replace(/\s+/g, ''), 'base64');
  if (der.length === 0) throw new Error('certificateFingerprint: empty certificate');
  return createHash('sha256').update(der).digest('hex');
}
