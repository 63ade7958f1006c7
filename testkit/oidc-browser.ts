/**
 * A person at the test OpenID provider's pages (testkit/oidc-test-provider.ts), in a real browser: completing a
 * device flow's verification page (enter the code, confirm, log in, consent), denying one, and signing in through an
 * authorization URL (log in, consent, follow the redirect), and the dashboard's own sign-in. Each of the first three runs in a fresh browser context, so no provider
 * session of an earlier person carries over, and reaches only this machine (the provider's pages import a web font
 * from the internet, which the closed network would leave hanging).
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';

async function loopbackContext(browser: Browser): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext();
  await context.route(
    (url) => !['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname),
    (route) => route.abort(),
  );
  return { context, page: await context.newPage() };
}

/** The provider's dev login page (any password) and its consent page, as `login`. */
async function logInAndConsent(page: Page, login: string): Promise<void> {
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill('any password');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await page.locator('input[name="prompt"][value="consent"]').waitFor({ state: 'attached' });
  await page.getByRole('button', { name: 'Continue' }).click();
}

/**
 * Opens `verificationUri`, enters `userCode` and confirms it, logs in as `login` and consents; resolves once the
 * provider shows its success page.
 */
export async function completeDeviceSignIn(browser: Browser, verificationUri: string, userCode: string, login: string): Promise<void> {
  const { context, page } = await loopbackContext(browser);
  try {
    await page.goto(verificationUri, { waitUntil: 'domcontentloaded' });
    await page.locator('input[name="user_code"]').fill(userCode);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('heading', { name: 'Confirm Device' }).waitFor();
    await page.getByRole('button', { name: 'Continue' }).click();
    await logInAndConsent(page, login);
    await page.getByRole('heading', { name: 'Sign-in Success' }).waitFor();
  } finally {
    await context.close();
  }
}

/** Opens a device flow's complete verification URI (the code in it) and aborts the sign-in there. */
export async function denyDeviceSignIn(browser: Browser, verificationUriComplete: string): Promise<void> {
  const { context, page } = await loopbackContext(browser);
  try {
    await page.goto(verificationUriComplete, { waitUntil: 'domcontentloaded' });
    await page.getByRole('heading', { name: 'Confirm Device' }).waitFor();
    await page.getByRole('button', { name: '[ Abort ]' }).click();
    await page.getByText('The Sign-in request was interrupted').waitFor();
  } finally {
    await context.close();
  }
}

/**
 * Opens an authorization URL, logs in as `login`, consents, and resolves with the text of the page the provider's
 * redirect lands on (the CLI's loopback page).
 */
export async function completeBrowserSignIn(browser: Browser, authorizationUrl: string, login: string): Promise<string> {
  const { context, page } = await loopbackContext(browser);
  try {
    await page.goto(authorizationUrl, { waitUntil: 'domcontentloaded' });
    await logInAndConsent(page, login);
    await page.waitForURL(/^http:\/\/127\.0\.0\.1:\d+\/callback\?/, { waitUntil: 'domcontentloaded' });
    return await page.locator('body').innerText();
  } finally {
    await context.close();
  }
}

/**
 * On the dashboard's sign-in page (`page` shows it, at `gatewayUrl`): clicks "Sign in with `displayName`", logs in
 * at the provider as `login` and consents; resolves once the dashboard is back and says who is signed in.
 */
export async function signInToDashboard(page: Page, gatewayUrl: string, login: string, displayName = 'Corp SSO'): Promise<void> {
  const wait = { timeout: 30_000 };
  await page.getByRole('link', { name: `Sign in with ${displayName}` }).click();
  await logInAndConsent(page, login);
  await page.waitForURL((u) => u.origin === gatewayUrl, wait);
  await page.locator('[data-who="identity"]').waitFor(wait);
}
