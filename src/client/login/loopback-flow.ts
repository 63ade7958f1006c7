/**
 * Sign-in with the authorization-code flow and PKCE through a loopback redirect (RFC 8252, as kubelogin does): the
 * CLI listens on 127.0.0.1 on a port the system picks, sends the browser to the provider with
 * `redirect_uri=http://127.0.0.1:<port>/callback`, and exchanges the code the browser brings back — after checking the
 * state it sent — for tokens. The browser is answered with a short page saying whether it worked. The URL is always
 * printed; starting the person's browser on it is a convenience that may fail quietly.
 */
import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  authorizationCodeGrant,
  buildAuthorizationUrl,
  calculatePKCECodeChallenge,
  type Configuration,
  randomPKCECodeVerifier,
  randomState,
  type TokenEndpointResponse,
} from 'openid-client';
import { CliError, ExitCode } from '../errors.js';
import type { CliIo } from '../io.js';
import { describeOidcError } from './oidc-client.js';

/** What the loopback flow needs besides the client configuration. */
export interface LoopbackFlowOptions {
  scopes: string[];
  displayName: string;
  /** Start the platform's browser on the URL (it is printed either way). */
  openBrowser: boolean;
  /** Give up when no sign-in came back within this long (default 5 minutes). */
  timeoutMs?: number;
  /** The command to run again, for messages. */
  again: string;
}

const DEFAULT_TIMEOUT_MS = 5 * 60_000;

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function answerPage(res: ServerResponse, status: number, title: string, text: string): void {
  const body =
    `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>` +
    `<body style="font-family:sans-serif;margin:3em"><h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p></body></html>`;
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'",
    'cache-control': 'no-store',
    connection: 'close',
  });
  res.end(body);
}

/**
 * Starts the platform's URL opener on `url` (`open` on macOS, `xdg-open` elsewhere), detached; never throws and
 * never waits for it. Best effort: on a server there is often no browser, so a launcher that cannot start or exits
 * non-zero only writes a note — the URL is printed for the person anyway.
 */
function openBrowser(url: string, io: CliIo, platform: NodeJS.Platform = process.platform): void {
  const command = platform === 'darwin' ? 'open' : 'xdg-open';
  const note = (why: string) => io.stderr(`note: could not open a browser (${command}: ${why}): open the URL above yourself\n`);
  try {
    const child = spawn(command, [url], { detached: true, stdio: 'ignore' });
    child.on('error', (err: NodeJS.ErrnoException) => note(err.code ?? err.message));
    child.on('exit', (code) => void (code !== 0 && code !== null && note(`exit code ${code}`)));
    child.unref();
  } catch (err) {
    note((err as Error).message);
  }
}

/**
 * Runs the loopback flow and resolves with the token endpoint's answer. Prints the URL to open on stderr (and opens
 * a browser when asked). Throws CliError (exit 1) when no sign-in returns within the timeout, when the provider sends
 * back an error (the person refused) or a wrong state, or when the code exchange fails. The listener is closed
 * however it ends.
 */
export async function signInWithLoopback(config: Configuration, io: CliIo, options: LoopbackFlowOptions): Promise<TokenEndpointResponse> {
  const verifier = randomPKCECodeVerifier();
  const challenge = await calculatePKCECodeChallenge(verifier);
  const state = randomState();
  let settle: { resolve(t: TokenEndpointResponse): void; reject(e: Error): void } | undefined;
  const done = new Promise<TokenEndpointResponse>((resolve, reject) => void (settle = { resolve, reject }));
  let redirectUri = '';

  const onRequest = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', redirectUri);
    if (url.pathname !== '/callback' || req.method !== 'GET')
      return answerPage(res, 404, 'Not found', 'This is the Outpost CLI waiting for a sign-in.');
    const current = settle;
    if (!current) return answerPage(res, 410, 'Sign-in already handled', 'This sign-in is over; look at your terminal.');
    settle = undefined;
    try {
      const tokens = await authorizationCodeGrant(config, url, { pkceCodeVerifier: verifier, expectedState: state });
      answerPage(res, 200, 'Signed in to Outpost', 'You are signed in; you can close this tab and go back to your terminal.');
      current.resolve(tokens);
    } catch (err) {
      const why = describeOidcError(err);
      answerPage(res, 400, 'Sign-in failed', `Outpost could not complete the sign-in: ${why}`);
      current.reject(new CliError(`the sign-in failed (${why}): ${options.again}`, ExitCode.FAILED));
    }
  };
  const server = createServer((req, res) => void onRequest(req, res));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  redirectUri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const timer = setTimeout(
    () =>
      settle?.reject(
        new CliError(
          `no sign-in came back to ${redirectUri} within ${Math.round(timeoutMs / 1000)} s: ${options.again} ` +
            '(open the URL in a browser on this machine; --flow device signs in from any device)',
          ExitCode.FAILED,
        ),
      ),
    timeoutMs,
  );
  try {
    const authorizationUrl = buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: options.scopes.join(' '),
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state,
    }).href;
    io.stderr(`To sign in with ${options.displayName}, open this URL in a browser (waiting at ${redirectUri}):\n  ${authorizationUrl}\n`);
    if (options.openBrowser) openBrowser(authorizationUrl, io);
    return await done;
  } finally {
    clearTimeout(timer);
    // The answer page is on its way (its connection closes after it); a browser's idle preconnections go now, and
    // anything still open a moment later is cut so it cannot keep the command running.
    server.close();
    server.closeIdleConnections();
    setTimeout(() => server.closeAllConnections(), 1000).unref();
  }
}
