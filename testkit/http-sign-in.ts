/**
 * A browser's part of the dashboard's sign-in, done with plain HTTP (Node's fetch, redirects followed by hand): a
 * cookie jar per origin, the gateway's login redirect, the test provider's development login and consent forms
 * (oidc-provider's `/interaction/<uid>`: any password; the login name picks the person), and the callback back to
 * the gateway. Tests of the sessions use it without a browser; the Chromium test signs in for real.
 */

/** Cookies per origin, with their paths (enough for the gateway's and the provider's cookies). */
export class CookieJar {
  private readonly cookies = new Map<string, Map<string, { value: string; path: string }>>();

  /** Stores the `Set-Cookie` headers of a response to `url` (a cookie with Max-Age=0 is removed). */
  store(url: string, response: Response): void {
    const { origin } = new URL(url);
    const jar = this.cookies.get(origin) ?? new Map();
    this.cookies.set(origin, jar);
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';').map((p) => p.trim());
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq);
      const path = attributes.find((a) => /^path=/i.test(a))?.slice(5) ?? '/';
      const removed = attributes.some((a) => /^max-age=0$/i.test(a)) || attributes.some((a) => /^expires=thu, 01 jan 1970/i.test(a));
      const key = `${name} ${path}`;
      if (removed) jar.delete(key);
      else jar.set(key, { value: pair!.slice(eq + 1), path });
    }
  }

  /** The `Cookie` header a browser sends to `url`. */
  header(url: string): string {
    const { origin, pathname } = new URL(url);
    const jar = this.cookies.get(origin);
    if (!jar) return '';
    return [...jar.entries()]
      .filter(([, c]) => pathname === c.path || pathname.startsWith(c.path.endsWith('/') ? c.path : `${c.path}/`))
      .map(([key, c]) => `${key.split(' ')[0]}=${c.value}`)
      .join('; ');
  }

  /** The value of cookie `name` for `origin`'s root path, or undefined. */
  get(origin: string, name: string): string | undefined {
    return this.cookies.get(new URL(origin).origin)?.get(`${name} /`)?.value;
  }

  /** Sets a cookie by hand (a replayed or forged one). */
  set(origin: string, name: string, value: string): void {
    const { origin: o } = new URL(origin);
    const jar = this.cookies.get(o) ?? new Map();
    this.cookies.set(o, jar);
    jar.set(`${name} /`, { value, path: '/' });
  }
}

/** One request with the jar's cookies; no redirect followed. */
export async function jarFetch(jar: CookieJar, url: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  const cookie = jar.header(url);
  if (cookie && !headers.has('cookie')) headers.set('cookie', cookie);
  const response = await fetch(url, { ...init, headers, redirect: 'manual' });
  jar.store(url, response);
  return response;
}

/** The outcome of a sign-in: the gateway's last redirect (where the dashboard would go) and the jar. */
export interface HttpSignIn {
  jar: CookieJar;
  /** The `Location` of the gateway's answer to the callback (`/`, `next`, or `/?sign_in_error=…`). */
  landing: string;
}

/** Options of {@link signInOverHttp}. */
export interface HttpSignInOptions {
  /** The provider's login name (`alice`, `bob`). */
  login: string;
  /** `next` of the login URL, sent as is. */
  next?: string;
  provider?: string;
  jar?: CookieJar;
  /** Changes the callback URL before it is followed (a test of a tampered state). */
  tamperCallback?: (url: URL) => void;
}

/**
 * Signs in at the gateway `gatewayUrl` as `login`: follows the login redirect to the provider, submits its login and
 * consent forms, and follows the callback to the gateway. Throws when a step answers something unexpected.
 */
export async function signInOverHttp(gatewayUrl: string, options: HttpSignInOptions): Promise<HttpSignIn> {
  const jar = options.jar ?? new CookieJar();
  const gateway = new URL(gatewayUrl).origin;
  const query = options.next === undefined ? '' : `?next=${encodeURIComponent(options.next)}`;
  let url = `${gatewayUrl}/auth/oidc/${options.provider ?? 'corp'}/login${query}`;
  let init: RequestInit = {};
  for (let hops = 0; hops < 20; hops++) {
    const response = await jarFetch(jar, url, init);
    init = {};
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location) {
      const next = new URL(location, url);
      if (new URL(url).origin === gateway && new URL(url).pathname.endsWith('/callback')) return { jar, landing: location };
      if (next.origin === gateway && next.pathname.endsWith('/callback')) options.tamperCallback?.(next);
      url = next.href;
      continue;
    }
    const html = await response.text();
    if (response.status !== 200 || !new URL(url).pathname.startsWith('/interaction/')) {
      throw new Error(`sign-in: unexpected ${response.status} from ${url}: ${html.slice(0, 300)}`);
    }
    // The provider's development pages: a login form, then a consent form, both posting back to the same URL.
    const prompt = /name="prompt" value="([a-z]+)"/.exec(html)?.[1];
    const form: Record<string, string> =
      prompt === 'login' ? { prompt, login: options.login, password: 'any' } : { prompt: prompt ?? 'consent' };
    init = { method: 'POST', body: new URLSearchParams(form), headers: { 'content-type': 'application/x-www-form-urlencoded' } };
  }
  throw new Error('sign-in: too many redirects');
}

/** Status and parsed JSON body of a call. */
export interface JsonOutcome {
  status: number;
  body: Record<string, unknown> & { error?: string; message?: string; code?: string };
}

/**
 * A JSON request with the jar's cookies: a Connect unary call when `path` names a method
 * (`outpost.api.v1.AccountService/ListAccounts`, POSTed), else a REST call. `headers` add to (or, with '', remove)
 * the defaults.
 */
export async function jsonCall(
  jar: CookieJar,
  baseUrl: string,
  method: string,
  path: string,
  options: { body?: unknown; headers?: Record<string, string> } = {},
): Promise<JsonOutcome> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...options.headers };
  for (const [k, v] of Object.entries(headers)) if (v === '') delete headers[k];
  const url = `${baseUrl}${path.startsWith('/') ? path : `/${path}`}`;
  const body = options.body === undefined ? (method === 'GET' ? undefined : '{}') : JSON.stringify(options.body);
  const response = await jarFetch(jar, url, { method, headers, body });
  const text = await response.text();
  let parsed: JsonOutcome['body'] = {};
  try {
    parsed = text ? (JSON.parse(text) as JsonOutcome['body']) : {};
  } catch {
    parsed = { message: text };
  }
  return { status: response.status, body: parsed };
}

/** `GET /auth/session` with the jar's cookies; `csrfToken` is what every later call of the session must send. */
export async function readSession(jar: CookieJar, baseUrl: string, headers: Record<string, string> = {}): Promise<JsonOutcome> {
  return jsonCall(jar, baseUrl, 'GET', '/auth/session', { headers });
}
