import { render } from 'preact';
import { createApi } from './api.js';
import { App } from './app.js';
import { createAuthStore } from './auth.js';
import { ServicesContext, type Services } from './services.js';
import { fetchWhoAmI, takeSignInError } from './session-api.js';
import './styles/base.css';
import './styles/content.css';
import './styles/forms.css';
import './styles/health.css';
import './styles/tables.css';
import './styles/dark.css';
import './styles/object-ops.css';
import './styles/charts.css';
import './styles/graph.css';
import './styles/timeline.css';

/**
 * Entry point: builds the auth store and API clients for this origin, learns who is signed in (the dashboard
 * session's CSRF token must be known before the first call), and mounts the app into #app.
 */
function storage(): Storage | null {
  try {
    return window.sessionStorage;
  } catch {
    return null;
  }
}

const auth = createAuthStore(storage());
auth.failSignIn(takeSignInError(window.location, window.history));
const services: Services = {
  auth,
  api: createApi(
    window.location.origin,
    () => auth.token(),
    () => auth.csrf(),
  ),
};
const root = document.getElementById('app');
if (!root) throw new Error('index.html has no #app element');

void fetchWhoAmI(auth.token()).then((who) => {
  auth.identify(who);
  render(
    <ServicesContext.Provider value={services}>
      <App />
    </ServicesContext.Provider>,
    root,
  );
});
