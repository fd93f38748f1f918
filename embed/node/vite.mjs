// The Vite plugin of @pyharness/embed: `plugins: [pyharness()]` in vite.config.
//
// Why it is needed: createHarness() finds its runtime (worker.mjs, manifest.json,
// pyodide/ with the wheels and the lock file, shell.mjs) next to the module, at
// new URL("./", import.meta.url). Vite bundles the module into a hashed chunk and does
// not know about those files; and they must keep their names (the worker, Pyodide and
// the lock file refer to each other by name), so they cannot go through Vite's hashed
// asset pipeline. This plugin
//   - in `vite build`: copies the runtime, unchanged, next to every output chunk that
//     contains pyharness.mjs (usually dist/assets/), so the default location works;
//   - in `vite dev`: keeps the package out of dependency pre-bundling (so the module is
//     served from its own directory and import.meta.url points there) and serves the
//     runtime files as they are: Vite's transforms would break Pyodide's loader, which
//     imports Node-only modules behind a runtime check.
// Without the plugin: copy this directory to your static files and pass `baseUrl`.
//
// `pyharness({ bundle: "python-dist" })` takes the runtime from a directory made by
// `pyharness build --package ... --requirements ... --wheels ...` (the sandbox's package
// index: docs/embedding.md, "Python packages") instead of the package's own.

import { createReadStream, existsSync, readFileSync, readdirSync, realpathSync, statSync } from "node:fs";
import { dirname, extname, join, posix, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const PACKAGE = "@pyharness/embed";
const HERE = dirname(fileURLToPath(import.meta.url));
/** What the worker loads at run time; everything else is page-side or typings. */
// (tests/js-unit/vite-runtime.test.mjs holds it to what worker.mjs imports)
const RUNTIME = [
  "manifest.json",
  "worker.mjs",
  "worker-boot.mjs",
  "worker-fs.mjs",
  "worker-outbox.mjs",
  "http.mjs",
  "sandbox-client.mjs",
  "persist.mjs",
  "opfs.mjs",
  "fs-hooks.mjs",
  "journal.mjs",
  "store-format.mjs",
  "protocol.mjs",
  "sandbox.mjs",
  "git-summary.mjs",
  "pyodide",
];
/** The harness worker's own CSP (docs/security.md): it loads only its own origin. */
const WORKER_CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; connect-src 'self'; base-uri 'none'";
const TYPES = {
  ".mjs": "text/javascript",
  ".wasm": "application/wasm",
  ".json": "application/json",
  ".zip": "application/zip",
  ".whl": "application/zip",
};

/**
 * @param {{bundle?: string}} [options] `bundle`: a `pyharness build` output directory to
 *   take the runtime from (its package index, its wheels), instead of this package's own
 * @returns {import("vite").Plugin}
 */
export default function pyharness(options = {}) {
  const entry = realpathSync(join(HERE, "pyharness.mjs"));
  const source = runtimeSource(options.bundle);
  return {
    name: "pyharness",
    config: () => ({ optimizeDeps: { exclude: [PACKAGE] } }),
    configureServer(server) {
      server.middlewares.use((req, res, next) => {
        const file = runtimeFileFor(req.url ?? "", server.config.root, source);
        if (!file) return next();
        res.setHeader("Content-Type", TYPES[extname(file)] ?? "application/octet-stream");
        res.setHeader("Content-Length", statSync(file).size);
        res.setHeader("Cache-Control", "no-cache");
        // The app's own headers (server.headers: COOP/COEP on an isolated page, whose
        // worker must carry COEP too) reach the runtime, which this answers before Vite.
        for (const [name, value] of Object.entries(server.config.server.headers ?? {})) {
          if (value !== undefined) res.setHeader(name, value);
        }
        if (file.endsWith("worker.mjs")) res.setHeader("Content-Security-Policy", WORKER_CSP);
        createReadStream(file).pipe(res);
      });
    },
    generateBundle(_options, bundle) {
      const dirs = new Set();
      for (const item of Object.values(bundle)) {
        if (item.type === "chunk" && item.moduleIds.some((id) => sameFile(id, entry))) {
          dirs.add(posix.dirname(item.fileName));
        }
      }
      if (dirs.size === 0) {
        this.warn(`${PACKAGE} is not imported by this build; its runtime was not copied`);
        return;
      }
      const files = runtimeFiles(source);
      for (const dir of dirs) {
        for (const file of files) {
          this.emitFile({ type: "asset", fileName: posix.join(dir, file), source: readFileSync(join(source, file)) });
        }
      }
    },
  };
}

/** Where the runtime comes from: this directory, or a bundle of the same version. */
function runtimeSource(bundle) {
  if (bundle === undefined) return HERE;
  const dir = resolve(bundle);
  const manifest = join(dir, "manifest.json");
  if (!existsSync(manifest))
    throw new Error(`pyharness({bundle}): ${dir} has no manifest.json; make it with \`pyharness build --out ${bundle}\``);
  const theirs = JSON.parse(readFileSync(manifest, "utf8")).pyharness;
  const ours = JSON.parse(readFileSync(join(HERE, "manifest.json"), "utf8")).pyharness;
  if (theirs !== ours)
    throw new Error(`pyharness({bundle}): ${dir} is pyharness ${theirs}, this package is ${ours}; build it from the same version`);
  return dir;
}

/** The runtime's files, as paths relative to `source` ("pyodide/x.whl"). */
function runtimeFiles(source) {
  const out = [];
  for (const name of RUNTIME) {
    if (name === "pyodide") {
      for (const file of readdirSync(join(source, name)).sort()) out.push(`${name}/${file}`);
    } else {
      out.push(name);
    }
  }
  return out;
}

/** The runtime file a dev-server URL names (taken from `source`), or null:
 * /node_modules/... or /@fs/... */
function runtimeFileFor(url, root, source) {
  let path;
  try {
    path = decodeURIComponent(new URL(url, "http://x").pathname);
  } catch {
    return null;
  }
  const candidate = path.startsWith("/@fs/") ? path.slice(4) : join(root, path);
  let real;
  try {
    real = realpathSync(candidate);
  } catch {
    // A file only the `bundle` has (a wheel of its package index): its folder exists here.
    try {
      real = join(realpathSync(dirname(candidate)), candidate.split("/").pop() ?? "");
    } catch {
      return null;
    }
  }
  const rel = relative(HERE, real).split(sep).join("/");
  const top = rel.split("/")[0];
  if (rel.startsWith("..") || !RUNTIME.includes(top)) return null;
  const file = source === HERE ? real : join(source, rel);
  return existsSync(file) && statSync(file).isFile() ? file : null;
}

function sameFile(id, path) {
  if (id === path) return true;
  try {
    return realpathSync(id.split("?")[0]) === path;
  } catch {
    return false;
  }
}
