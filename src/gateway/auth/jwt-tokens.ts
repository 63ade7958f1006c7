/**
 * Verification of signed JWT bearer tokens with `jose`, shared by the operator-configured issuer (`auth.jwt`) and the
 * replicas' own tokens (replica-token.ts). Every failure becomes UNAUTHENTICATED with a message a human can act on
 * ("token expired", "token signature invalid", "token audience ..."); the key material never appears in it.
 */
import { createPublicKey, type KeyObject } from 'node:crypto';
import { Code, ConnectError } from '@connectrpc/connect';
import { decodeJwt, jwtVerify, type JWTPayload } from 'jose';
import type { Logger } from '../../shared/logger.js';
import type { GatewayAuthConfig } from '../config/schema.js';
import { createFileSource } from './file-source.js';

/** A verified token. */
interface VerifiedJwt {
  subject: string;
  /** `exp` in epoch milliseconds (every accepted token has one). */
  expiresAt: number;
  payload: JWTPayload;
}

/** Verifies JWTs of one issuer. */
export interface JwtVerifier {
  verify(token: string): Promise<VerifiedJwt>;
}

/** Expectations of one verifier. */
export interface JwtExpectations {
  issuer: string;
  audience: string;
  algorithms?: string[];
  subjectClaim: string;
  clockToleranceSeconds: number;
  /**
   * Longest accepted lifetime: `exp - (iat ?? now)` above it is refused, so a leaked token cannot be minted to live
   * for years. `exp` itself is always required.
   */
  maxLifetimeSeconds: number;
  /** Resolves the current key (files re-read when they change). */
  key(): Promise<Uint8Array | KeyObject>;
  /** Prefix of error messages (`token`, `replica token`). */
  what: string;
}

/** True when `token` has the shape of a compact JWS (three base64url parts). */
export function looksLikeJwt(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(token);
}

/** The unverified `iss` of a JWT-shaped token (only to pick the verifier; never trusted). */
export function unverifiedIssuer(token: string): string | undefined {
  let iss: unknown;
  try {
    iss = decodeJwt(token).iss;
  } catch {
    // not a decodable JWT: it names no issuer
  }
  return typeof iss === 'string' ? iss : undefined;
}

/** Builds a verifier from expectations. */
export function createJwtVerifierFor(e: JwtExpectations): JwtVerifier {
  return {
    async verify(token) {
      let payload: JWTPayload;
      try {
        ({ payload } = await jwtVerify(token, await e.key(), {
          issuer: e.issuer,
          audience: e.audience,
          algorithms: e.algorithms,
          clockTolerance: e.clockToleranceSeconds,
          requiredClaims: ['exp'],
        }));
      } catch (err) {
        throw new ConnectError(explain(err, e.what), Code.Unauthenticated);
      }
      const exp = payload.exp as number;
      const issuedAt = typeof payload.iat === 'number' ? payload.iat : Math.floor(Date.now() / 1000);
      if (exp - issuedAt > e.maxLifetimeSeconds) {
        throw new ConnectError(
          `${e.what} lifetime (exp - iat) of ${exp - issuedAt} s exceeds the longest accepted ${e.maxLifetimeSeconds} s (auth.jwt.maxLifetimeSeconds)`,
          Code.Unauthenticated,
        );
      }
      const subject = payload[e.subjectClaim];
      if (typeof subject !== 'string' || subject === '') {
        throw new ConnectError(`${e.what} has no string "${e.subjectClaim}" claim to name its subject`, Code.Unauthenticated);
      }
      return { subject, payload, expiresAt: exp * 1000 };
    },
  };
}

/** The verifier of `auth.jwt`; reads the secret or public key now (throwing naming the key) and on every change. */
export function createJwtVerifier(config: NonNullable<GatewayAuthConfig['jwt']>, logger: Logger): JwtVerifier {
  const onError = (err: Error) => logger.error({ err: err.message }, 'JWT key file unreadable; keeping the last key');
  let key: () => Promise<Uint8Array | KeyObject>;
  let algorithms = config.algorithms;
  if (config.secretFile !== undefined) {
    const source = createFileSource(config.secretFile, 'auth.jwt.secretFile', onError);
    key = cached(source.read, (raw) => new TextEncoder().encode(raw.toString().trim()));
    algorithms ??= ['HS256', 'HS384', 'HS512'];
  } else {
    const source = createFileSource(config.publicKeyFile!, 'auth.jwt.publicKeyFile', onError);
    try {
      createPublicKey(source.current());
    } catch (err) {
      throw new Error(`auth.jwt.publicKeyFile: ${config.publicKeyFile} is not a PEM public key: ${(err as Error).message}`);
    }
    key = cached(source.read, (raw) => createPublicKey(raw));
  }
  return createJwtVerifierFor({ ...config, algorithms, key, what: 'token' });
}

/**
 * Converts the file contents to a key only when they changed: the file source hands out the same buffer until the file
 * changes, and a replaced buffer (with its key) is collected.
 */
function cached<K extends object>(read: () => Promise<Buffer>, convert: (raw: Buffer) => K): () => Promise<K> {
  const keys = new WeakMap<Buffer, K>();
  return async () => {
    const raw = await read();
    const key = keys.get(raw) ?? convert(raw);
    keys.set(raw, key);
    return key;
  };
}

function explain(err: unknown, what: string): string {
  const e = err as { code?: string; claim?: string; reason?: string; message?: string };
  switch (e.code) {
    case 'ERR_JWT_EXPIRED':
      return `${what} expired`;
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
      return `${what} signature invalid`;
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED':
      if (e.claim === 'exp' && e.reason === 'missing') return `${what} has no exp claim`;
      if (e.claim === 'exp') return `${what} exp claim invalid: ${e.reason ?? e.message ?? ''}`.trim();
      if (e.claim === 'nbf') return `${what} not yet valid (nbf)`;
      if (e.claim === 'aud') return `${what} audience (aud) does not match the expected audience`;
      if (e.claim === 'iss') return `${what} issuer (iss) does not match the expected issuer`;
      return `${what} claim ${e.claim ?? '?'} invalid: ${e.reason ?? e.message ?? ''}`.trim();
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
      return `${what} algorithm not allowed`;
    case 'ERR_JWS_INVALID':
    case 'ERR_JWT_INVALID':
    case 'ERR_JOSE_NOT_SUPPORTED':
      return `${what} malformed: ${e.message ?? ''}`.trim();
    default:
      return `${what} invalid`;
  }
}
