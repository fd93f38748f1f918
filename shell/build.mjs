// Bundles the sandbox (just-bash + our filesystem adapter + the python3 runner,
// shell/pyexec.py, as text) into one ES module: the sandbox imports it from a Blob, so
// it can have no imports of its own.
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
  entryPoints: [join(here, "sandbox.mjs")],
  loader: { ".py": "text" },
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
