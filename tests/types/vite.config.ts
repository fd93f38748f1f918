// Compiled by `tsc -p tests/types/tsconfig.node.json` (make typecheck): the Vite plugin's
// types fit Vite's own config type, as in a user's vite.config.ts.
import type { UserConfig } from "vite";
import pyharness from "@pyharness/embed/vite";

const config: UserConfig = { plugins: [pyharness()] };
export default config;
