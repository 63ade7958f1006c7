import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/**
 * Builds the browser dashboard from web/ into web/dist/, which the gateway serves at `/`.
 *
 * Paths are resolved from this file, not from the working directory, so `vite build --config web/vite.config.ts`
 * works from the repository root. JSX is compiled by Oxc with Preact's automatic runtime (no React, no preset).
 * The generated protobuf code is imported from ../src/gen with `.js` extensions; Vite maps them to the `.ts` files.
 *
 * `vite --config web/vite.config.ts` serves the page with hot reload and forwards the API (every path under
 * /outpost.api.v1.) to the gateway at OUTPOST_GATEWAY (default http://127.0.0.1:7002, the demo's), so the page can
 * keep calling its own origin.
 */
const root = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root,
  base: '/',
  publicDir: false,
  oxc: {
    jsx: { runtime: 'automatic', importSource: 'preact' },
  },
  server: {
    proxy: {
      '^/outpost\\.api\\.v1\\.': { target: process.env.OUTPOST_GATEWAY ?? 'http://127.0.0.1:7002', changeOrigin: true },
      '^/auth/': { target: process.env.OUTPOST_GATEWAY ?? 'http://127.0.0.1:7002', changeOrigin: true },
    },
  },
  build: {
    outDir: fileURLToPath(new URL('./dist', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    reportCompressedSize: true,
  },
});
