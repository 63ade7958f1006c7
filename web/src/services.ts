import { createContext } from 'preact';
import { useContext, useEffect, useState } from 'preact/hooks';
import type { Api } from './api.js';
import type { AuthState, AuthStore } from './auth.js';

/** What every view needs from the outside world: the API clients and the auth store. */
export interface Services {
  api: Api;
  auth: AuthStore;
}

/** Provided once by the app root (main.tsx); views read it with useServices(). */
export const ServicesContext = createContext<Services | null>(null);

/** The app's services. Throws when rendered outside ServicesContext (a programming error, not a runtime state). */
export function useServices(): Services {
  const services = useContext(ServicesContext);
  if (!services) throw new Error('useServices() outside <ServicesContext.Provider>');
  return services;
}

/** The current auth state, re-rendering the caller on sign-in, sign-out and prompts. */
export function useAuthState(): AuthState {
  const { auth } = useServices();
  const [state, setState] = useState(auth.state());
  useEffect(() => {
    setState(auth.state());
    return auth.subscribe(() => setState(auth.state()));
  }, [auth]);
  return state;
}
