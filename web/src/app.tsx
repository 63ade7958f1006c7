import { Code } from '@connectrpc/connect';
import { useEffect, useRef } from 'preact/hooks';
import { AccountDetailView } from './account-detail-view.js';
import { AccountsView } from './accounts-view.js';
import { AgentsView } from './agents-view.js';
import { AuditView } from './audit-view.js';
import { describeError } from './error-message.js';
import { readObjectRef } from './object-href.js';
import { ObjectPageView } from './object-page-view.js';
import { ObjectsView } from './objects-view.js';
import { OperationPageView } from './operation-page-view.js';
import { OperationsView } from './operations-view.js';
import { OverviewView } from './overview-view.js';
import { PageTitle } from './page-title.js';
import { hrefFor, useRoute, type Route, type Section } from './router.js';
import { useAuthState, useServices } from './services.js';
import { fetchWhoAmI, postLogout } from './session-api.js';
import { SignedInAs } from './signed-in-as.js';
import { StaleView } from './stale-view.js';
import { SignInPage } from './sign-in-page.js';
import { FleetContext, useFleetSubscription } from './use-fleet.js';

const NAV: { section: Section; label: string; href: string }[] = [
  { section: 'overview', label: 'Overview', href: hrefFor('') },
  { section: 'accounts', label: 'Accounts', href: hrefFor('accounts') },
  { section: 'agents', label: 'Agents', href: hrefFor('agents') },
  { section: 'objects', label: 'Objects', href: hrefFor('objects') },
  { section: 'operations', label: 'Operations', href: hrefFor('operations') },
  { section: 'audit', label: 'Audit', href: hrefFor('audit') },
];

function RouteView({ route }: { route: Route }) {
  switch (route.section) {
    case 'overview':
      return <OverviewView />;
    case 'accounts':
      return route.params[0] ? <AccountDetailView name={route.params[0]} /> : <AccountsView />;
    case 'agents':
      return <AgentsView />;
    case 'objects': {
      if (route.params.length === 0) return <ObjectsView query={route.query} />;
      const target = readObjectRef(route.params);
      return target ? <ObjectPageView target={target} /> : <NotFound />;
    }
    case 'operations':
      return route.params[0] ? <OperationPageView id={route.params[0]} /> : <OperationsView query={route.query} />;
    case 'audit':
      return <AuditView query={route.query} />;
    case 'not-found':
      return <NotFound />;
  }
}

function NotFound() {
  return (
    <>
      <PageTitle title="Page not found" />
      <p>
        There is no such page. Go to the <a href={hrefFor('')}>overview</a>.
      </p>
    </>
  );
}

/**
 * The page shell: header (product name, main navigation, live indicator, who is signed in with their roles,
 * sign-out), and the routed view in <main>.
 * It owns the one WatchFleet subscription (restarted on sign-in/out) and shows the sign-in form instead of the
 * view while the auth store asks for a token. Views are remounted on every auth change, so they fetch again.
 */
export function App() {
  const services = useServices();
  const auth = useAuthState();
  const fleet = useFleetSubscription(services, auth.version);
  const route = useRoute();
  const main = useRef<HTMLElement>(null);

  // After navigating to another page (not on first load, not on a query change), move focus to its heading so
  // screen reader and keyboard users start at the new content.
  const place = `${route.section}/${route.params.join('/')}`;
  const firstPlace = useRef(true);
  useEffect(() => {
    if (firstPlace.current) {
      firstPlace.current = false;
      return;
    }
    (document.getElementById('page-title') ?? main.current)?.focus();
  }, [place]);

  // After a token sign-in, a sign-out or a refused CSRF token, ask again who is signed in (the first answer came before
  // the page mounted).
  const first = useRef(`${auth.version}/${auth.recheck}`);
  useEffect(() => {
    if (`${auth.version}/${auth.recheck}` === first.current) return;
    let current = true;
    void fetchWhoAmI(services.auth.token()).then((who) => current && services.auth.identify(who));
    return () => {
      current = false;
    };
  }, [auth.version, auth.recheck, services.auth]);

  const signOut = async (): Promise<void> => {
    const csrf = services.auth.csrf();
    if (csrf) {
      // The session ends at the gateway first; then the provider's own sign-out, when it has one.
      const endSessionUrl = await postLogout(csrf).catch(() => undefined);
      if (endSessionUrl) {
        window.location.assign(endSessionUrl);
        return;
      }
    }
    services.auth.signOut();
  };

  const live = fleet.live;
  // On the sign-in form nothing is connecting: the header says so instead of "Reconnecting…".
  const liveText = auth.prompt ? 'Not signed in' : live ? 'Live' : 'Reconnecting…';
  const liveClass = auth.prompt ? 'is-idle' : live ? 'is-live' : 'is-down';
  const forbidden = fleet.error?.code === Code.PermissionDenied;

  return (
    <FleetContext.Provider value={fleet}>
      {/* biome-ignore lint/a11y/useValidAnchor: a skip link; its click focuses <main> without changing the hash route */}
      <a
        class="skip-link"
        href="#main"
        onClick={(e) => {
          e.preventDefault();
          main.current?.focus();
        }}
      >
        Skip to content
      </a>
      <header class="site-header">
        <div class="header-inner">
          <a class="brand" href={hrefFor('')}>
            Outpost
          </a>
          <nav aria-label="Main">
            <ul>
              {NAV.map((item) => (
                <li key={item.section}>
                  <a href={item.href} aria-current={route.section === item.section ? 'page' : undefined}>
                    {item.label}
                  </a>
                </li>
              ))}
            </ul>
          </nav>
          <div class="header-end">
            <p
              role="status"
              aria-label={liveText}
              class={`live ${liveClass}`}
              title={!live && !auth.prompt && fleet.error ? describeError(fleet.error) : undefined}
            >
              {liveText}
            </p>
            {auth.who && !auth.prompt && <SignedInAs who={auth.who} />}
            {(auth.hasToken || auth.who?.csrfToken !== undefined) && (
              <button type="button" class="on-dark" onClick={() => void signOut()}>
                Sign out
              </button>
            )}
          </div>
        </div>
      </header>
      <main id="main" ref={main} tabIndex={-1}>
        {forbidden && !auth.prompt && (
          <p class="error" role="alert">
            Live updates are unavailable. {describeError(fleet.error)}
          </p>
        )}
        {auth.prompt ? (
          <SignInPage />
        ) : (
          <StaleView lostAt={fleet.lostAt}>
            <RouteView key={auth.version} route={route} />
          </StaleView>
        )}
      </main>
    </FleetContext.Provider>
  );
}
