// Precompile the bundle's Python to bytecode, with the very Python the browser runs
// (Pyodide 3.14, in Node): the pure-Python wheels and the standard library
// (python_stdlib.zip). Without it every import compiles its source in the page's worker:
// most of a bare Pyodide boot, and about a third of the harness's.
//
//   node tooling/build/pycompile.mjs PYODIDE_DIR OUT_DIR ARCHIVE...
//
// An ARCHIVE named python_stdlib.zip is the standard library, any other a wheel. Each
// `pkg/mod.py` becomes `pkg/mod.pyc` (sourceless, as Pyodide's own packages ship), its
// code objects named by the path the source would have had (`/lib/python314.zip/json/
// decoder.py`, `/lib/python3.14/site-packages/pydantic/main.py`), so a traceback still
// says file and line. A wheel's dist-info is kept; a file that does not compile stays
// source. The Python side is compile_archive() below.
import { readFileSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [pyodideDir, outDir, ...archives] = process.argv.slice(2);
if (!pyodideDir || !outDir || archives.length === 0) {
  console.error("usage: node pycompile.mjs PYODIDE_DIR OUT_DIR ARCHIVE...");
  process.exit(2);
}
const { loadPyodide } = await import(pathToFileURL(join(resolve(pyodideDir), "pyodide.mjs")).href);
const pyodide = await loadPyodide({ indexURL: `${resolve(pyodideDir)}/` });
const compileArchive = pyodide.runPython(`
import io, sys, zipfile
from importlib._bootstrap_external import _code_to_timestamp_pyc

SITE = f"/lib/python{sys.version_info[0]}.{sys.version_info[1]}/site-packages/"
# Where Pyodide puts python_stdlib.zip (pyodide.mjs: /lib/python\${major}\${minor}.zip).
STDLIB = f"/lib/python{sys.version_info[0]}{sys.version_info[1]}.zip/"

def compile_archive(data, stdlib):
    src = zipfile.ZipFile(io.BytesIO(bytes(data.to_py())))
    prefix = STDLIB if stdlib else SITE
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as dst:
        for info in src.infolist():
            body = src.read(info)
            name = info.filename
            if name.endswith(".py") and ".dist-info/" not in name:
                try:
                    code = compile(body, prefix + name, "exec", dont_inherit=True)
                except SyntaxError:
                    code = None  # kept as source: it fails on import as it always did
                if code is not None:
                    # Sourceless: no source to check against, so no timestamp is read.
                    body = bytes(_code_to_timestamp_pyc(code, 0, 0))
                    name = name[:-3] + ".pyc"
            entry = zipfile.ZipInfo(name, date_time=info.date_time)
            entry.external_attr = info.external_attr
            entry.compress_type = zipfile.ZIP_DEFLATED
            dst.writestr(entry, body)
    return out.getvalue()

compile_archive
`);
for (const archive of archives) {
  const stdlib = basename(archive) === "python_stdlib.zip";
  const out = compileArchive(new Uint8Array(readFileSync(archive)), stdlib);
  writeFileSync(join(outDir, basename(archive)), out.toJs());
  out.destroy();
}
