/**
 * The dashboard's files (the Vite build in `web/dist`), served by the gateway at `/`. They hold no data — every call
 * the page makes is an authenticated Connect RPC — so they are served to anyone (see authorization.ts). The files are
 * read into memory (with a gzip copy) and read again when `index.html` changes, so a rebuild shows up without a
 * restart. Vite names assets by content hash: those are cached for a year, `index.html` is revalidated every time.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { Env, Hono } from 'hono';
import type { PathRule } from '../auth/authorization.js';

/** Where `npm run build` writes the dashboard. */
export const DEFAULT_WEB_DIR = fileURLToPath(new URL('../../../web/dist', import.meta.url));

/** Paths a GET serves from the build; everything else falls through to the other routes. */
function isWebAssetPath(path: string): boolean {
  return path === '/' || path === '/index.html' || path === '/favicon.svg' || path.startsWith('/assets/');
}

/** The dashboard's files require nothing (no data in them): a GET or HEAD of them is served to anyone. */
export const DASHBOARD_PATH_RULE: PathRule = {
  name: "the dashboard's files",
  requirement: 'none',
  methods: ['GET', 'HEAD'],
  matches: isWebAssetPath,
};

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.map': 'application/json',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

/** The page may load its own scripts and styles and call this origin; nothing else, and it may not be framed. */
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

interface Asset {
  body: Uint8Array<ArrayBuffer>;
  gzip?: Uint8Array<ArrayBuffer>;
  type: string;
  etag: string;
}

/** Adds `GET`/`HEAD` of the dashboard to the app. Without a build in `dir`, `/` explains how to build one (503). */
export function addWebAssets<E extends Env>(app: Hono<E>, dir: string): void {
  let loaded: { stamp: number; files: Map<string, Asset> } | undefined;
  const load = (): Map<string, Asset> | undefined => {
    const stamp = statSync(join(dir, 'index.html'), { throwIfNoEntry: false })?.mtimeMs;
    if (stamp === undefined) return undefined;
    if (loaded?.stamp !== stamp) loaded = { stamp, files: readTree(dir) };
    return loaded.files;
  };

  app.on(['GET', 'HEAD'], ['/', '/index.html', '/favicon.svg', '/assets/*'], (c) => {
    const files = load();
    if (!files) {
      return c.html(
        `<!doctype html><html lang="en"><title>Outpost</title><p>The Outpost dashboard is not built. Run <code>npm run build</code> (or <code>npm run demo</code>, which builds it) and reload; the API works without it.</p></html>`,
        503,
        SECURITY_HEADERS,
      );
    }
    const path = c.req.path === '/' ? '/index.html' : c.req.path;
    const asset = files.get(path);
    if (!asset) return c.json({ error: 'not_found', message: `no file ${path} in the dashboard build` }, 404);
    const headers: Record<string, string> = {
      ...SECURITY_HEADERS,
      'content-type': asset.type,
      etag: asset.etag,
      'cache-control': path.startsWith('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache',
      vary: 'accept-encoding',
    };
    if (c.req.header('if-none-match') === asset.etag) return c.body(null, 304, headers);
    const gzip = asset.gzip && /\bgzip\b/.test(c.req.header('accept-encoding') ?? '');
    if (gzip) headers['content-encoding'] = 'gzip';
    return c.body(gzip ? asset.gzip! : asset.body, 200, headers);
  });
}

/** Every file under `dir`, keyed by its URL path. */
function readTree(dir: string): Map<string, Asset> {
  const files = new Map<string, Asset>();
  const walk = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const full = join(at, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile()) {
        const body = new Uint8Array(readFileSync(full));
        const type = TYPES[extname(entry.name)] ?? 'application/octet-stream';
        const compressible = /^(text\/|application\/json|image\/svg)/.test(type) && body.length > 1024;
        files.set(`/${relative(dir, full).split(sep).join('/')}`, {
          body,
          gzip: compressible ? new Uint8Array(gzipSync(body)) : undefined,
          type,
          etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
        });
      }
    }
  };
  walk(dir);
  return files;
}
