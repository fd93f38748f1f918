// Types of the Vite plugin (vite.mjs): `plugins: [pyharness()]` in vite.config.
import type { Plugin } from "vite";

/**
 * Copies the pyharness runtime (worker, Pyodide, wheels, lock file, shell) unchanged next
 * to the built chunk that contains createHarness, and serves it as-is in `vite dev`.
 */
export interface PyharnessPluginOptions {
  /** A directory made by `pyharness build` (e.g. with `--package tabulate==0.10.0`, for
   * the sandbox's package index) to take the runtime from, instead of this package's
   * own; it must be built from the same pyharness version. */
  bundle?: string;
}

export default function pyharness(options?: PyharnessPluginOptions): Plugin;
