/**
 * What a request (or an agent stream) presents to prove who it is, read once from the Node request: the bearer token
 * of the `Authorization` header and, on a TLS connection, the client certificate with the TLS layer's verdict on it.
 * Nothing here decides anything: the authenticator does.
 */
import type http from 'node:http';
import type http2 from 'node:http2';
import type { PeerCertificate, TLSSocket } from 'node:tls';
import { CSRF_HEADER, type BrowserRequest } from './browser-session.js';
import { formatSubjectAttributes, subjectAttributes, type SubjectAttributes } from './certificate-subject.js';

/** The client certificate as the TLS layer saw it. */
export interface PeerCertificateInfo {
  /** True when the certificate chains to the configured CA (Node's `socket.authorized`). */
  authorized: boolean;
  /** Why it does not (Node's `authorizationError`, e.g. `UNABLE_TO_VERIFY_LEAF_SIGNATURE`). */
  authorizationError?: string;
  /** Subject as `CN=agent-1,O=Example` (values escaped as RFC 4514 says: `CN=a\\,O=b` is one CN). */
  subject: string;
  /** The parsed subject attributes: what attribute matchers look at. */
  attributes: SubjectAttributes;
  /** SHA-256 fingerprint (hex, no colons). */
  fingerprint: string;
}

/** Everything the authenticator looks at. */
export interface RequestCredentials {
  /** Token of an `Authorization: Bearer <token>` header. */
  bearer?: string;
  /** Set when an Authorization header was sent in another scheme (so the error can say so). */
  otherAuthorization?: string;
  /** True when the connection is TLS. */
  secure: boolean;
  /** The client certificate, when one was presented on a TLS connection. */
  certificate?: PeerCertificateInfo;
  /**
   * The cookies and CSRF headers of a browser's request, for the dashboard's session (browser-session.ts): set only
   * when the surface accepts the session cookie and the request sent cookies.
   */
  browser?: BrowserRequest;
}

/** Options of {@link credentialsFromNodeRequest}. */
interface CredentialOptions {
  /** Read the cookies and CSRF headers too (the client API's Connect calls, the REST routes). */
  browser?: boolean;
}

type NodeRequest = http.IncomingMessage | http2.Http2ServerRequest;

/**
 * Reads the credentials of a Node request (HTTP/1.1 or HTTP/2, cleartext or TLS). Never throws. The session cookie
 * is read only with `options.browser`: surfaces that must not accept it (kubectl, agent streams) leave it out.
 */
export function credentialsFromNodeRequest(req: NodeRequest, options: CredentialOptions = {}): RequestCredentials {
  const header = req.headers.authorization;
  const value = Array.isArray(header) ? header[0] : header;
  const out: RequestCredentials = { secure: false };
  if (options.browser) out.browser = browserRequest(req);
  if (value !== undefined && value !== '') {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(value);
    if (m) out.bearer = m[1];
    else out.otherAuthorization = value.split(/\s/, 1)[0]!;
  }
  const socket = req.socket as Partial<TLSSocket> | undefined;
  if (socket && typeof socket.getPeerCertificate === 'function') {
    out.secure = true;
    // Node returns an empty object when no certificate was presented, null (or throws) on a socket torn down meanwhile.
    let cert: PeerCertificate | null = null;
    try {
      cert = socket.getPeerCertificate(false);
    } catch {}
    if (cert?.subject) {
      const attributes = subjectAttributes(cert.subject as unknown as Record<string, string | string[]>);
      out.certificate = {
        attributes,
        authorized: socket.authorized === true,
        authorizationError: socket.authorizationError ? String(socket.authorizationError) : undefined,
        subject: formatSubjectAttributes(attributes),
        fingerprint: (cert.fingerprint256 ?? '').replace(/:/g, '').toLowerCase(),
      };
    }
  }
  return out;
}

/** The cookies and CSRF headers of `req`; undefined when it sent no cookie. */
function browserRequest(req: NodeRequest): BrowserRequest | undefined {
  const one = (name: string): string | undefined => {
    const v = req.headers[name];
    return Array.isArray(v) ? v[0] : v;
  };
  const cookie = req.headers.cookie;
  if (cookie === undefined || cookie === '') return undefined;
  return {
    cookie: Array.isArray(cookie) ? cookie.join('; ') : cookie,
    csrf: one(CSRF_HEADER.toLowerCase()),
    origin: one('origin'),
    fetchSite: one('sec-fetch-site'),
    method: (req.method ?? 'GET').toUpperCase(),
    path: (req.url ?? '/').split('?')[0]!,
  };
}
