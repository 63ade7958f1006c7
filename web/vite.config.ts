import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/**
 * Builds the browser dashboard from web/ into web/dist/, which the gateway serves at `/`.
 *
 * Paths are resolved from this file, not from the working directory, so `vite build --config web/vite.config.ts`
 * works from the repository root. JSX is compiled by Oxc with Preact's automatic runtime (no React, no preset).
 * The generated protobuf code is imported from ../src/gen with `.js` extensions; Vite maps them to the `.ts` files.
 */
const root = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root,
  base: '/',
  publicDir: false,
  oxc: {
    jsx: { runtime: 'automatic', importSource: 'preact' },
  },
  build: {
    outDir: fileURLToPath(new URL('./dist', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    reportCompressedSize: true,
  },
});
