// Vite's settings for the user panel: sources in app/web, output in app/web/dist (served by StaticRoutes).
// Everything is bundled (xterm.js and its CSS included): the page loads nothing from another origin.
import { fileURLToPath } from "node:url"
import { defineConfig } from "vite"

const here = fileURLToPath(new URL(".", import.meta.url))

export default defineConfig({
  root: here,
  base: "/",
  publicDir: "public",
  clearScreen: false,
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "es2022",
    assetsDir: "assets",
    sourcemap: false,
    // One small app: a single script and stylesheet are fine; xterm.js alone is ~300 kB.
    chunkSizeWarningLimit: 800
  },
  server: {
    // `npx vite app/web` during development: the API runs beside it on :3000.
    proxy: { "/api": { target: "http://localhost:3000", ws: true } }
  }
})
