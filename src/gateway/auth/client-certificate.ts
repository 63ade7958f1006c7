/**
 * Verifies the client certificate the TLS layer collected (the handshake never rejects one: see tls-context.ts) and
 * names the reason when it is not acceptable, so the client reads why it was refused instead of a TLS alert.
 */
import { Code, ConnectError } from '@connectrpc/connect';
import type { GatewayTlsConfig } from '../config/schema.js';
import { createSubjectMatcher } from './certificate-subject.js';
import type { PeerCertificateInfo } from './credentials.js';

/** Compiled client-certificate policy. */
export interface ClientCertificatePolicy {
  readonly clientAuth: GatewayTlsConfig['clientAuth'];
  /**
   * Returns the certificate subject when the certificate chains to the configured CA and matches a subject filter
   * (any filter; no filters admit every subject); throws UNAUTHENTICATED naming the reason otherwise.
   */
  verify(certificate: PeerCertificateInfo): string;
}

/** Compiles the policy of `tls` (no TLS: client certificates are never asked for, clientAuth NONE). */
export function createClientCertificatePolicy(tls: GatewayTlsConfig | undefined): ClientCertificatePolicy {
  const filters = (tls?.subjectFilters ?? []).map((f) => createSubjectMatcher(typeof f === 'string' ? { subject: f } : f));
  return {
    clientAuth: tls?.clientAuth ?? 'NONE',
    verify(certificate) {
      if (!certificate.authorized) {
        const why = certificate.authorizationError ?? 'unknown verification error';
        throw new ConnectError(
          `client certificate ${certificate.subject} is not signed by the configured CA (tls.caFile): ${why}`,
          Code.Unauthenticated,
        );
      }
      if (filters.length > 0 && !filters.some((matches) => matches(certificate.subject, certificate.attributes))) {
        throw new ConnectError(
          `client certificate subject ${certificate.subject} matches no subject filter (tls.subjectFilters)`,
          Code.Unauthenticated,
        );
      }
      return certificate.subject;
    },
  };
}
