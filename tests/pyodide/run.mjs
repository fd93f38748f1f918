// The in-Pyodide tier: runs the CPython test suite (tests/) inside real Pyodide, in
// Node, with the wheels of the built bundle. Proves the same Python runs on both.
// asyncio.run needs JSPI (WebAssembly stack switching): Node 20 has it behind a flag.
//   node --experimental-wasm-stack-switching tests/pyodide/run.mjs [BUNDLE_DIR] [TEST_WHEELS_DIR] [-- pytest args]
import { readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "..", "..");
const argv = process.argv.slice(2);
const split = argv.indexOf("--");
const [bundleArg = join(root, "dist"), wheelsArg = join(root, ".cache", "test-wheels")] = split === -1 ? argv : argv.slice(0, split);
const bundle = resolve(bundleArg);
const testWheels = resolve(wheelsArg);
const pytestArgs = split === -1 ? [] : argv.slice(split + 1);

const { loadPyodide } = await import(pathToFileURL(join(bundle, "pyodide", "pyodide.mjs")).href);
const pyodide = await loadPyodide({
  indexURL: `${join(bundle, "pyodide")}/`,
  lockFileURL: join(bundle, "pyodide", "pyodide-lock.json"),
});
const failures = [];
const errorCallback = (message) => failures.push(message);
await pyodide.loadPackage(["pyharness", "jsonschema"], { errorCallback });
const wheels = readdirSync(testWheels)
  .filter((f) => f.endsWith(".whl"))
  .map((f) => join(testWheels, f));
await pyodide.loadPackage(wheels, { errorCallback });
if (failures.length) {
  console.error(`in-Pyodide tier: packages failed to load: ${failures.join("; ")}`);
  process.exit(2);
}

// The harness worker's module, for the tests of its filesystem hooks (tests/test_jail.py);
// it needs a `self` only while it loads.
globalThis.self = globalThis;
globalThis.pyharnessWorker = await import(pathToFileURL(join(root, "embed", "worker", "worker.mjs")).href);
delete globalThis.self;

// The tests are read straight from the checkout (mounted at /src); the harness itself
// comes from the bundle's wheel, not from /src/harness (the run prints which).
pyodide.FS.mkdirTree("/src");
pyodide.FS.mount(pyodide.FS.filesystems.NODEFS, { root }, "/src");
pyodide.globals.set("pytest_args", pyodide.toPy(["/src/tests", "-p", "no:cacheprovider", ...pytestArgs]));
const code = await pyodide.runPythonAsync(`
import sys, harness, pytest
print(f"in-Pyodide tier: Python {sys.version.split()[0]} on {sys.platform}, harness from {harness.__file__}")
int(pytest.main(list(pytest_args)))
`);
process.exit(code);
