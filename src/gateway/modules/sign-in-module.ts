/**
 * Sign-in with the `auth.oidc` providers: the `/auth/…` routes (the provider list; the dashboard's sign-in, session
 * and sign-out), the dashboard's sessions as a credential of the client API and the REST routes (the resolver it
 * hands the core's authenticator: auth/browser-session.ts), and the periodic purge of ended sessions. Left out
 * without `auth.oidc`; its path rule applies either way (feature-paths.ts), so `/auth/…` answers 404 rather than 401
 * on a gateway without providers. Contributes REST routes, so it comes before the armory module in the list.
 */
import { createPeriodicJob } from '../../shared/periodic-job.js';
import { addLoginRoutes } from '../sign-in/login-routes.js';
import { addProviderRoutes } from '../sign-in/provider-routes.js';
import { createSessionResolver } from '../sign-in/session-resolver.js';
import { addSessionRoutes } from '../sign-in/session-routes.js';
import { externalUrlOf, type SignInContext } from '../sign-in/sign-in-context.js';
import { createWebSessions } from '../sign-in/web-sessions.js';
import type { GatewayModule } from './module.js';

/** How often each replica deletes the sessions that ended (a bounded batch per statement). */
const PURGE_INTERVAL_MS = 5 * 60_000;

/** The sign-in module (module-list.ts). */
export const signInModule: GatewayModule = {
  name: 'sign-in',
  serves: '`/auth/…`: the OIDC providers, the dashboard’s sign-in, session and sign-out, when `auth.oidc` is set',
  enabled: (config) => config.auth.oidc !== undefined,
  build: (core) => {
    const oidcConfig = core.config.auth.oidc!;
    const logger = core.logger.child({ component: 'sign-in' });
    const sessions = createWebSessions({
      database: core.database,
      keys: core.secretKeys,
      oidc: core.oidc,
      clock: core.sessionClock,
      sessionHours: oidcConfig.sessionHours,
      idleMinutes: oidcConfig.idleMinutes,
      logger,
    });
    const ctx: SignInContext = {
      oidc: core.oidc,
      sessions,
      keys: core.secretKeys,
      audit: core.audit,
      rules: core.config.authorization.rules,
      authenticator: core.authenticator,
      externalUrl: () => externalUrlOf(oidcConfig.externalUrl, core.state.baseUrl()),
      clock: core.sessionClock,
      logger,
    };
    // Before anything is served: the cookie is a credential from the first request on.
    core.authenticator.useSessions(createSessionResolver(ctx));
    const purge = createPeriodicJob({
      run: () => sessions.purge(),
      intervalMs: PURGE_INTERVAL_MS,
      logger,
      errorMessage: 'purge of ended dashboard sessions failed',
    });
    return {
      restRoutes: [
        {
          addRoutes: (app) => {
            addProviderRoutes(app, core.oidc);
            addLoginRoutes(app, ctx);
            addSessionRoutes(app, ctx);
          },
        },
      ],
      start: () => {
        purge.start();
        core.closers.defer('dashboard session purge', () => purge.stop());
      },
    };
  },
};
