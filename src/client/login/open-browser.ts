/**
 * Opening a URL in the person's browser for the loopback sign-in: `open` on macOS, `xdg-open` elsewhere. Best effort
 * by design — on a server there is often no browser at all — so a launcher that is missing or fails only adds a note;
 * the URL is always printed for the person to open by hand.
 */
import { spawn } from 'node:child_process';
import type { CliIo } from '../io.js';

/**
 * Starts the platform's URL opener on `url`, detached; never throws and never waits for it. A launcher that cannot
 * start or exits non-zero writes a note to stderr.
 */
export function openBrowser(url: string, io: CliIo, platform: NodeJS.Platform = process.platform): void {
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
