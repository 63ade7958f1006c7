import { useEffect, useState } from 'preact/hooks';

/** The dashboard's pages, one per top-level navigation link. */
export type Section = 'overview' | 'accounts' | 'agents' | 'objects' | 'operations' | 'audit' | 'not-found';

/** A parsed `#/section/param?query` location. */
export interface Route {
  section: Section;
  /** Decoded path segments after the section (`#/accounts/<name>` gives [name]). */
  params: string[];
  query: URLSearchParams;
}

const SECTIONS: Record<string, Section> = {
  '': 'overview',
  accounts: 'accounts',
  agents: 'agents',
  objects: 'objects',
  operations: 'operations',
  audit: 'audit',
};

/** Parses a location hash ("#/objects?kind=Pod"); anything unknown is the not-found section. */
function parseHash(hash: string): Route {
  const raw = hash.replace(/^#\/?/, '');
  const q = raw.indexOf('?');
  const path = q < 0 ? raw : raw.slice(0, q);
  const query = new URLSearchParams(q < 0 ? '' : raw.slice(q + 1));
  const segments = path.split('/').filter((s) => s !== '');
  const params = segments.slice(1).map((s) => {
    try {
      return decodeURIComponent(s);
    } catch {
      return s;
    }
  });
  const section = SECTIONS[segments[0] ?? ''] ?? 'not-found';
  return { section, params, query };
}

/**
 * Builds a hash href. Empty query values are left out so URLs stay short and a cleared filter field really clears.
 */
export function hrefFor(path: string, query: Record<string, string> = {}): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== '') params.set(key, value);
  const qs = params.toString();
  return `#/${path}${qs ? `?${qs}` : ''}`;
}

/** Navigates to a hash href; a no-op when already there (no duplicate history entry). */
export function navigate(href: string): void {
  if (window.location.hash !== href) window.location.hash = href;
}

/** The current route, updated on every hashchange (back/forward, links, navigate()). */
export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseHash(window.location.hash));
  useEffect(() => {
    const onChange = (): void => setRoute(parseHash(window.location.hash));
    window.addEventListener('hashchange', onChange);
    // A hash change between the first render and this effect fired no listener: read the hash again.
    onChange();
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return route;
}
