// Bundles the worker-side shell (just-bash + our filesystem adapter) into one ES module.
//   node shell/build.mjs OUT_FILE
import { build } from "esbuild";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const out = process.argv[2];
if (!out) {
  console.error("usage: node shell/build.mjs OUT_FILE");
  process.exit(2);
}
await build({
  entryPoints: [join(here, "shell.mjs")],
  outfile: out,
  bundle: true,
  format: "esm",
  platform: "browser",
  target: "es2022",
  minify: true,
  legalComments: "none",
  alias: { "node:zlib": join(here, "zlib-shim.mjs") },
  inject: [join(here, "buffer-shim.mjs")],
  logLevel: "warning",
});
