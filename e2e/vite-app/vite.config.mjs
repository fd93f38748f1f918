// The whole setup a Vite app needs: the plugin copies the pyharness runtime next to the
// built chunk (vite build) and serves it as-is (vite dev).
import pyharness from "@pyharness/embed/vite";

export default { plugins: [pyharness()] };
