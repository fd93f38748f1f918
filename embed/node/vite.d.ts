// Types of the Vite plugin (vite.mjs): `plugins: [pyharness()]` in vite.config.
import type { Plugin } from "vite";

/**
 * Copies the pyharness runtime (worker, Pyodide, wheels, lock file, shell) unchanged next
 * to the built chunk that contains createHarness, and serves it as-is in `vite dev`.
 */
export default function pyharness(): Plugin;
