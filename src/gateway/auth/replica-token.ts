/**
 * Tokens replicas present to each other on internal routes (`POST /armory/agent/forwardedoperations`,
 * `POST /armory/agent/operationresults`): short-lived HS256 JWTs with issuer and audience `outpost-replica`, signed
 * with the secret every replica reads from `auth.replicaSecretFile` (the same file, e.g. a mounted Kubernetes Secret).
 * The secret file is re-read when it changes, so rotating it needs no restart (tokens signed with the old secret stop
 * verifying once every replica sees the new one).
 */
import { SignJWT } from 'jose';
import type { Logger } from '../../shared/logger.js';
import { createFileSource, type FileSource } from './file-source.js';
import { createJwtVerifierFor, type JwtVerifier } from './jwt-tokens.js';

/** `iss` and `aud` of replica tokens. */
export const REPLICA_ISSUER = 'outpost-replica';

/** Lifetime of a replica token; signers re-sign before it runs out. */
const TTL_SECONDS = 60;
/** Shortest secret accepted (bytes, after trimming whitespace). */
const MIN_SECRET_BYTES = 32;

/** Signs replica tokens for one replica. */
export interface ReplicaTokenSigner {
  /** A valid token (cached; a new one is signed when the cached one has less than half its life left). */
  token(): Promise<string>;
}

/** The secret as it is now (re-read when the file changes; a cheap trim and encode, so not cached). */
function secretOf(source: FileSource): () => Promise<Uint8Array> {
  return async () => toSecret(await source.read(), source.path);
}

function toSecret(raw: Buffer, path: string): Uint8Array {
  // utf8 both ways (the defaults of toString and Buffer.from)
  const key = new Uint8Array(Buffer.from(raw.toString().trim()));
  if (key.length < MIN_SECRET_BYTES) throw new Error(`auth.replicaSecretFile: ${path} holds fewer than ${MIN_SECRET_BYTES} bytes`);
  return key;
}

/**
 * Creates a signer for replica `replicaId` (the token's subject). Throws now when the secret file cannot be read or
 * is shorter than 32 bytes.
 */
export function createReplicaTokenSigner(secretFile: string, replicaId: string, logger?: Logger): ReplicaTokenSigner {
  const source = createFileSource(secretFile, 'auth.replicaSecretFile', (err) =>
    logger?.error({ err: err.message }, 'replica secret unreadable'),
  );
  toSecret(source.current(), secretFile);
  const secret = secretOf(source);
  let cached: { token: string; renewAt: number } | undefined;
  return {
    async token() {
      const now = Date.now();
      if (cached && now < cached.renewAt) return cached.token;
      const token = await new SignJWT({})
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setIssuer(REPLICA_ISSUER)
        .setAudience(REPLICA_ISSUER)
        .setSubject(replicaId)
        .setIssuedAt(Math.floor(now / 1000))
        .setExpirationTime(Math.floor(now / 1000) + TTL_SECONDS)
        .sign(await secret());
      cached = { token, renewAt: now + (TTL_SECONDS * 1000) / 2 };
      return token;
    },
  };
}

/** The verifier of replica tokens; throws now when the secret file cannot be read or is too short. */
export function createReplicaTokenVerifier(secretFile: string, logger: Logger): JwtVerifier {
  const source = createFileSource(secretFile, 'auth.replicaSecretFile', (err) =>
    logger.error({ err: err.message }, 'replica secret unreadable; keeping the last one'),
  );
  toSecret(source.current(), secretFile);
  return createJwtVerifierFor({
    issuer: REPLICA_ISSUER,
    audience: REPLICA_ISSUER,
    algorithms: ['HS256'],
    subjectClaim: 'sub',
    clockToleranceSeconds: 30,
    // signers use TTL_SECONDS; a little slack for a replica whose clock runs behind
    maxLifetimeSeconds: TTL_SECONDS * 2,
    key: secretOf(source),
    what: 'replica token',
  });
}
