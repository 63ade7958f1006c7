/**
 * A real browser for the dashboard tests: Debian's chromium driven by playwright-core, started the way this machine
 * needs (headless, no sandbox as root, no background networking: the closed network refuses Google's hosts), plus
 * the test output folder screenshots go to and an axe-core accessibility check.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';

/** Where Debian installs chromium (`apt-get install chromium`; `.ci/run` does it). */
const CHROMIUM = process.env.OUTPOST_TEST_CHROMIUM ?? '/usr/bin/chromium';

/** Starts headless chromium; fails with the install command when it is missing. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`no chromium at ${CHROMIUM}: install it with \`apt-get install chromium\` (.ci/run does) or set OUTPOST_TEST_CHROMIUM`);
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
    ],
  });
}

/**
 * Starts a test's stack and Chromium side by side (each takes seconds). `keep` gets whichever started before a
 * failure of the other is thrown, so the test's after() closes what did start.
 */
export async function startWithChromium<T>(
  start: Promise<T>,
  keep: (started: T | undefined, browser: Browser | undefined) => void,
): Promise<void> {
  const [started, launched] = await Promise.allSettled([start, launchChromium()]);
  keep(started.status === 'fulfilled' ? started.value : undefined, launched.status === 'fulfilled' ? launched.value : undefined);
  if (started.status === 'rejected') throw started.reason;
  if (launched.status === 'rejected') throw launched.reason;
}

/** `test-output/<name>` at the repository root (created; ignored by git), or under OUTPOST_TEST_OUTPUT. */
export function testOutputDir(name: string): string {
  const root = process.env.OUTPOST_TEST_OUTPUT ?? fileURLToPath(new URL('../../test-output', import.meta.url));
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** One accessibility problem axe-core found. */
export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

/**
 * Runs axe-core (WCAG 2 A/AA rules, colour contrast included) on the page — or only on the elements matching the CSS
 * selector `within`, which is much quicker on a long page — and returns the serious and critical violations. The
 * page's CSP forbids injected scripts: open it in a context created with `bypassCSP: true`.
 */
export async function seriousAxeViolations(page: Page, within?: string): Promise<AxeViolation[]> {
  const axePath = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
  await page.addScriptTag({ path: axePath });
  return page.evaluate(async (selector) => {
    const axe = (
      window as unknown as {
        axe: {
          run(
            ctx: Document | { include: string[] },
            opts: unknown,
          ): Promise<{ violations: { id: string; impact: string | null; help: string; nodes: { target: string[] }[] }[] }>;
        };
      }
    ).axe;
    const context = selector ? { include: [selector] } : document;
    const result = await axe.run(context, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } });
    return result.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => n.target.join(' ')) }));
  }, within);
}
