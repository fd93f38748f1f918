// vite dev on a cross-origin-isolated page: the app's own COOP/COEP headers
// (server.headers) reach the pyharness runtime the plugin serves too (an isolated page
// starts only a worker whose script carries COEP).
import pyharness from "@pyharness/embed/vite";

export default {
  plugins: [pyharness()],
  server: {
    headers: { "Cross-Origin-Opener-Policy": "same-origin", "Cross-Origin-Embedder-Policy": "require-corp" },
  },
};
