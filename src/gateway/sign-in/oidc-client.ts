/**
 * The gateway as an OpenID Connect client of one provider (openid-client): the dashboard's confidential client
 * (`clientId`, its secret read from `clientSecretFile` at each use, so a rotated secret needs no restart; without a
 * file a public client signing in with PKCE alone), built over the provider's discovery document the core already
 * keeps (auth/oidc-issuers.ts). Plain http only to loopback issuers, which the configuration alone allows.
 */
import { readFile } from 'node:fs/promises';
import { Code, ConnectError } from '@connectrpc/connect';
import * as client from 'openid-client';
import { discoveryOptions, type OidcIssuer } from '../auth/oidc-issuers.js';

/** How long one call to the provider (token, refresh) may take (seconds). */
const PROVIDER_TIMEOUT_SECONDS = 10;

/**
 * A client configuration for one sign-in, refresh or sign-out. Rejects UNAVAILABLE naming the provider when its
 * discovery cannot be read, FAILED_PRECONDITION naming the setting when the client secret file cannot.
 */
export async function clientConfiguration(issuer: OidcIssuer): Promise<client.Configuration> {
  const metadata = await issuer.serverMetadata();
  const { config } = issuer;
  let secret: string | undefined;
  if (config.clientSecretFile) {
    try {
      secret = (await readFile(config.clientSecretFile, 'utf8')).trim();
    } catch (err) {
      throw new ConnectError(
        `auth.oidc provider ${config.name}: its clientSecretFile ${config.clientSecretFile} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
        Code.FailedPrecondition,
      );
    }
  }
  const configuration = new client.Configuration(
    metadata,
    config.clientId,
    secret,
    secret ? client.ClientSecretBasic(secret) : client.None(),
  );
  for (const allow of discoveryOptions(config.issuer).execute ?? []) allow(configuration);
  configuration.timeout = PROVIDER_TIMEOUT_SECONDS;
  return configuration;
}
