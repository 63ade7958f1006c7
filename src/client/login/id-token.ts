/**
 * What the CLI reads from an ID token it just received from the provider's token endpoint (over TLS, so its origin
 * is known; the gateway verifies its signature on every call): when it expires, and who it names, to tell the user
 * whom they signed in as. Nothing here decides any right.
 */
import { decodeJwt } from 'jose';
import { CliError, ExitCode } from '../errors.js';

/** The claims the CLI shows and acts on. */
export interface IdTokenFacts {
  /** `exp`: when the gateway stops accepting it. */
  expiresAt: Date;
  subject: string;
  /** `preferred_username`, else `email`, else `sub`: the most readable name of the person. */
  displayName: string;
  /** The `groups` claim (an array of strings or one string), without the gateway's `groupsPrefix`. */
  groups: string[];
}

/** Reads an ID token's claims. Throws CliError (exit 1) when it is not a JWT with a numeric `exp` and a `sub`. */
export function readIdToken(idToken: string, origin: string): IdTokenFacts {
  let claims: Record<string, unknown>;
  try {
    claims = decodeJwt(idToken);
  } catch (err) {
    throw new CliError(`${origin} answered an ID token that is not a JWT (${(err as Error).message})`, ExitCode.FAILED);
  }
  if (typeof claims.exp !== 'number' || typeof claims.sub !== 'string') {
    throw new CliError(`${origin} answered an ID token without exp or sub`, ExitCode.FAILED);
  }
  const named = [claims.preferred_username, claims.email].find((v): v is string => typeof v === 'string' && v !== '');
  const groups = claims.groups;
  return {
    expiresAt: new Date(claims.exp * 1000),
    subject: claims.sub,
    displayName: named ?? claims.sub,
    groups: Array.isArray(groups) ? groups.filter((g): g is string => typeof g === 'string') : typeof groups === 'string' ? [groups] : [],
  };
}

/** `alice@example.com (sub alice); groups: a, b` — the line `outpost login` prints. */
export function describePerson(facts: IdTokenFacts): string {
  const who = facts.displayName === facts.subject ? facts.subject : `${facts.displayName} (sub ${facts.subject})`;
  return `${who}; groups: ${facts.groups.length > 0 ? facts.groups.join(', ') : '(none in the ID token)'}`;
}
