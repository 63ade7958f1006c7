/**
 * A small Fiat for the tests: `GET /authorize/{user}` answers the `UserPermission.View` JSON Fiat's AuthorizeController
 * writes (Jackson's names: `name`, `accounts: [{name, authorizations}]`, `applications`, `admin`,
 * `allowAccessToUnknownApplications`, …) for the users it is given, and 404 "user not found" for the others, as Fiat
 * does without its resolver fallback. `down` makes it cut every connection (Fiat unreachable); every request is
 * recorded (path and headers) so tests can see what the gateway asked.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What a test says about one user. */
export interface FiatUser {
  accounts?: Record<string, string[]>;
  applications?: Record<string, string[]>;
  admin?: boolean;
  allowAccessToUnknownApplications?: boolean;
}

/** A running test Fiat. */
export interface TestFiat {
  readonly baseUrl: string;
  /** Users by name (as Fiat stores them, lower-cased); change them at will. */
  readonly users: Map<string, FiatUser>;
  /** When true every connection is destroyed before an answer. */
  down: boolean;
  /** Requests received, oldest first. */
  readonly requests: { path: string; headers: IncomingHttpHeaders }[];
  close(): Promise<void>;
}

/** The view JSON Fiat writes for `user`. */
function fiatView(name: string, user: FiatUser): Record<string, unknown> {
  const resources = (map: Record<string, string[]> = {}) =>
    Object.entries(map).map(([resource, authorizations]) => ({ name: resource, authorizations }));
  return {
    name,
    accounts: resources(user.accounts),
    applications: resources(user.applications),
    serviceAccounts: [],
    roles: [],
    buildServices: [],
    extensionResources: {},
    admin: user.admin ?? false,
    accountManager: false,
    legacyFallback: false,
    allowAccessToUnknownApplications: user.allowAccessToUnknownApplications ?? false,
  };
}

/** Starts the server on 127.0.0.1, port 0. */
export async function startTestFiat(users: Record<string, FiatUser> = {}): Promise<TestFiat> {
  const fiat = {
    users: new Map(Object.entries(users)),
    down: false,
    requests: [] as TestFiat['requests'],
  };
  const server = createServer((req, res) => {
    fiat.requests.push({ path: req.url ?? '', headers: req.headers });
    if (fiat.down) {
      req.socket.destroy();
      return;
    }
    const match = /^\/authorize\/([^/?]+)$/.exec(req.url ?? '');
    if (req.method !== 'GET' || !match) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"no such route"}');
      return;
    }
    const name = decodeURIComponent(match[1]!);
    const user = fiat.users.get(name.toLowerCase());
    if (!user) {
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ status: 404, error: 'Not Found', message: `user not found: ${name}` }));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(fiatView(name.toLowerCase(), user)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(fiat, {
    baseUrl: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}
