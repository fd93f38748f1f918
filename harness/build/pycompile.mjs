// Precompile the pure-Python wheels of the bundle to bytecode, with the very Python the
// browser runs (Pyodide 3.14, in Node). Without it every import compiles its source in
// the page's worker: about a third of the boot.
//
//   node harness/build/pycompile.mjs PYODIDE_DIR OUT_DIR WHEEL...
//
// Each `pkg/mod.py` becomes `pkg/mod.pyc` (sourceless, as Pyodide's own packages ship);
// dist-info is kept. The Python side is compile_wheel() below.
import { readFileSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [pyodideDir, outDir, ...wheels] = process.argv.slice(2);
if (!pyodideDir || !outDir || wheels.length === 0) {
  console.error("usage: node pycompile.mjs PYODIDE_DIR OUT_DIR WHEEL...");
  process.exit(2);
}
const { loadPyodide } = await import(pathToFileURL(join(resolve(pyodideDir), "pyodide.mjs")).href);
const pyodide = await loadPyodide({ indexURL: resolve(pyodideDir) + "/" });
const compileWheel = pyodide.runPython(`
import io, importlib.util, zipfile
from importlib._bootstrap_external import _code_to_timestamp_pyc

SITE = "/lib/python3.14/site-packages/"

def compile_wheel(data):
    src = zipfile.ZipFile(io.BytesIO(bytes(data.to_py())))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as dst:
        for info in src.infolist():
            body = src.read(info)
            name = info.filename
            if name.endswith(".py") and ".dist-info/" not in name:
                code = compile(body, SITE + name, "exec", dont_inherit=True)
                # Sourceless .pyc: no source to check against, so no timestamp is read.
                body = bytes(_code_to_timestamp_pyc(code, 0, 0))
                name = name[:-3] + ".pyc"
            entry = zipfile.ZipInfo(name, date_time=info.date_time)
            entry.external_attr = info.external_attr
            entry.compress_type = zipfile.ZIP_DEFLATED
            dst.writestr(entry, body)
    return out.getvalue()

compile_wheel
`);
for (const wheel of wheels) {
  const out = compileWheel(new Uint8Array(readFileSync(wheel)));
  writeFileSync(join(outDir, basename(wheel)), out.toJs());
  out.destroy();
}
