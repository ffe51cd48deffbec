import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = path.dirname(fileURLToPath(import.meta.url));

/**
 * The organizer dashboard: built into dist/dashboard, served by the gateway at /app. Every
 * file but index.html has a content hash in its name (the gateway caches those for a year).
 * JSX is compiled for Preact by Vite's own transformer (oxc): no Babel in the build.
 */
export default defineConfig({
  root: here,
  base: '/app/',
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  // `npx vite services/dashboard`: the screens with hot reload, the API from a running gateway.
  server: { proxy: { '/api': process.env.GATEWAY_URL ?? 'http://localhost:3000' } },
  build: {
    outDir: path.resolve(here, '../../dist/dashboard'),
    emptyOutDir: true,
    target: 'es2022',
    // Nothing inlined as data: URLs or in the page: every asset is a file of its own under the CSP.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
    reportCompressedSize: false,
  },
});
