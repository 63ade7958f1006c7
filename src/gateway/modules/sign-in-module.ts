/**
 * Sign-in with the `auth.oidc` providers: the `/auth/…` routes (the provider list; the dashboard's sign-in, session
 * and sign-out). Left out without `auth.oidc`; its path rule applies either way (feature-paths.ts), so `/auth/…`
 * answers 404 rather than 401 on a gateway without providers. Contributes REST routes, so it comes before the armory
 * module in the list. Starts nothing.
 */
import { addProviderRoutes } from '../sign-in/provider-routes.js';
import type { GatewayModule } from './module.js';

/** The sign-in module (module-list.ts). */
export const signInModule: GatewayModule = {
  name: 'sign-in',
  serves: '`/auth/…`: the OIDC providers, the dashboard’s sign-in, session and sign-out, when `auth.oidc` is set',
  enabled: (config) => config.auth.oidc !== undefined,
  build: (core) => ({ restRoutes: [{ addRoutes: (app) => addProviderRoutes(app, core.oidc) }] }),
};
