/**
 * A bare OpenID provider on loopback for the unit tests of the gateway's token checks (oidc-issuers, oidc-signing-keys):
 * a node:http server on 127.0.0.1, port 0, serving a discovery document and a JWKS that each test shapes — keys added,
 * published and withdrawn at will, a discovery or JWKS answer that fails — and counting the requests, so a test can say
 * how often the gateway went to the provider. Tokens are signed with `jose` over raw claims (any claim, any header), so
 * malformed and hostile tokens can be made too. The full provider the end-to-end tests sign in to is oidc-test-provider.ts.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CompactSign, exportJWK, generateKeyPair, type JWK, type JWSHeaderParameters } from 'jose';

/** How one endpoint answers instead of its document. */
interface StubAnswer {
  status: number;
  body: string;
}

/** A running stub provider. */
export interface StubIssuer {
  /** `http://127.0.0.1:<port>`: its discovery document names it as issuer. */
  readonly issuer: string;
  /** `<issuer>/jwks`. */
  readonly jwksUri: string;
  /** Makes a new ES256 key (not published until {@link publish} names it). */
  addKey(kid: string): Promise<void>;
  /** The key ids the JWKS lists from now on. */
  publish(...kids: string[]): void;
  /** Signs `claims` (as given, nothing added) with key `kid`; `header` overrides the protected header (alg, kid). */
  sign(claims: Record<string, unknown>, kid: string, header?: Partial<JWSHeaderParameters>): Promise<string>;
  /** The discovery document from now on: a change of the normal one, or an answer that fails (undefined: back to normal). */
  discovery(answer?: { change?: (doc: Record<string, unknown>) => Record<string, unknown>; fail?: StubAnswer }): void;
  /** An answer the JWKS endpoint gives instead of the keys (undefined: the keys again). */
  jwksAnswer(answer?: StubAnswer): void;
  /** How many requests reached `path` (`/jwks`, `/.well-known/openid-configuration`). */
  requests(path: string): number;
  /** The Accept header of the last JWKS request. */
  readonly jwksAccept: string | undefined;
  close(): Promise<void>;
}

export const DISCOVERY_PATH = '/.well-known/openid-configuration';

/** Starts a stub provider with no key published. */
export async function startStubIssuer(): Promise<StubIssuer> {
  const keys = new Map<string, { privateKey: CryptoKey; publicJwk: JWK }>();
  let published: string[] = [];
  let discoveryChange: ((doc: Record<string, unknown>) => Record<string, unknown>) | undefined;
  let discoveryFail: StubAnswer | undefined;
  let jwksFail: StubAnswer | undefined;
  let jwksAccept: string | undefined;
  const counts = new Map<string, number>();
  let issuer = '';

  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    counts.set(path, (counts.get(path) ?? 0) + 1);
    const send = (status: number, body: string) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(body);
    };
    if (path === DISCOVERY_PATH) {
      if (discoveryFail) return send(discoveryFail.status, discoveryFail.body);
      const doc = {
        issuer,
        jwks_uri: `${issuer}/jwks`,
        authorization_endpoint: `${issuer}/auth`,
        token_endpoint: `${issuer}/token`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['ES256'],
      };
      return send(200, JSON.stringify(discoveryChange ? discoveryChange(doc) : doc));
    }
    if (path === '/jwks') {
      jwksAccept = req.headers.accept;
      if (jwksFail) return send(jwksFail.status, jwksFail.body);
      return send(200, JSON.stringify({ keys: published.map((kid) => keys.get(kid)!.publicJwk) }));
    }
    send(404, '{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    issuer,
    jwksUri: `${issuer}/jwks`,
    async addKey(kid) {
      const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
      keys.set(kid, { privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' } });
    },
    publish(...kids) {
      published = kids;
    },
    sign(claims, kid, header = {}) {
      return new CompactSign(new TextEncoder().encode(JSON.stringify(claims)))
        .setProtectedHeader({ alg: 'ES256', kid, ...header } as JWSHeaderParameters & { alg: string })
        .sign(keys.get(kid)!.privateKey);
    },
    discovery(answer) {
      discoveryChange = answer?.change;
      discoveryFail = answer?.fail;
    },
    jwksAnswer(answer) {
      jwksFail = answer;
    },
    requests: (path) => counts.get(path) ?? 0,
    get jwksAccept() {
      return jwksAccept;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
