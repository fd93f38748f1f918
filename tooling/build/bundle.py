"""Assemble the static bundle::

    DIR/pyharness.mjs            entry module (createHarness)
    DIR/widget.mjs (+ widget-*.mjs, markdown.mjs, markdown-it.mjs)  the <pyharness-chat> widget
    DIR/vite.mjs                 the Vite plugin (npm package users)
    DIR/worker.mjs               the module worker bootstrap
    DIR/sandbox*.mjs             the sandbox: page host, frame script (+ its CSP hash),
                                 harness-side client, and the sandbox worker's module
    DIR/preview.html, preview-loader.mjs  h.preview's guard document and the loader
                                 that runs in the site's frame
    DIR/git-summary.mjs          h.git(): isomorphic-git over h.fs, read only
    DIR/*.d.ts, events.schema.json
    DIR/pyodide/                 Pyodide core from the npm package (python_stdlib.zip
                                 precompiled to bytecode)
    DIR/pyodide/pyodide-lock.json  generated: exactly the wheels below
    DIR/pyodide/*.whl            pinned wheels + the harness's own wheel
    DIR/pyodide/sandbox-lock.json  generated: the sandbox's micropip and the extra
                                 packages (--package, --requirements, --wheels), whose
                                 wheels sit beside it unmodified (packages.py)
    DIR/manifest.json            file sizes (boot progress), versions, the sandbox's packages

The result works from any static server and references no other origin.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .packages import PackageRequest, manifest_fields, sandbox_wheels, write_index
from .wheels import WHEELS, BuildError, fetch_wheels, lock_entry, sha256_of

PYODIDE_VERSION = "314.0.7"
PYODIDE_CORE = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip")
# embed/ is grouped by the realm a file runs in; the bundle is flat (users import
# dist/pyharness.mjs, dist/widget.mjs, dist/vite.mjs, and the worker and the Vite plugin
# find their siblings by name), so each file is copied to DIR/<name> with its imports of
# another realm ("../shared/protocol.mjs") rewritten to the sibling ("./protocol.mjs").
# The sandbox frame's script (embed/sandbox/) is inlined into sandbox-frame.mjs instead.
EMBED_REALMS = ("page", "worker", "widget", "node", "shared")
EMBED_SUFFIXES = (".mjs", ".d.ts", ".json")
_REALM_IMPORT = re.compile(r"""(["'])\.\./(?:""" + "|".join(EMBED_REALMS) + r""")/([\w.-]+)\1""")


def embed_files(root: Path) -> dict[str, Path]:
    """The bundle's name of each file of embed/'s realms, and its source."""
    files: dict[str, Path] = {}
    for realm in EMBED_REALMS:
        for src in sorted((root / "embed" / realm).iterdir()):
            if not src.name.endswith(EMBED_SUFFIXES):
                continue
            if src.name in files:
                raise BuildError(f"embed/{realm}/{src.name} and {files[src.name]} would both be "
                                 f"dist/{src.name}: names must be unique across embed/")
            files[src.name] = src
    return files


def flat_imports(text: str) -> str:
    """A module's text as it is in the flat bundle: "../realm/x.mjs" becomes "./x.mjs"."""
    return _REALM_IMPORT.sub(lambda m: f"{m.group(1)}./{m.group(2)}{m.group(1)}", text)


# What the worker loads at boot; jsonschema is loaded only when the page has tools.
BOOT_PACKAGES = ("pyharness",)
OPTIONAL_PACKAGES = ("jsonschema",)


def repo_root() -> Path:
    """The source tree this build runs from (it needs embed/ and node_modules/)."""
    here = Path(__file__).resolve().parents[2]
    if (here / "embed").is_dir():
        return here
    cwd = Path.cwd()
    if (cwd / "embed").is_dir():
        return cwd
    raise BuildError("run `pyharness build` from a pyharness source checkout (embed/ not found)")


def build(out: Path, root: Path | None = None, wheel_cache: Path | None = None,
          offline: bool = False, packages: Sequence[str] = (),
          requirements: Sequence[Path] = (), wheel_dirs: Sequence[Path] = ()) -> Path:
    """Build the bundle into ``out``. ``packages`` (requirement strings), ``requirements``
    (pip requirements files) and ``wheel_dirs`` (every wheel in each) are the extra
    packages of the sandbox's index, for its micropip."""
    root = root or repo_root()
    wheel_cache = wheel_cache or root / ".cache" / "wheels"
    pyodide_src = _pyodide_dir(root)
    wheels = fetch_wheels(wheel_cache, offline=offline)
    request = PackageRequest(tuple(packages), tuple(requirements), tuple(wheel_dirs))
    sandbox = sandbox_wheels(request, wheel_cache, offline=offline)
    own = _build_own_wheel(root)
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".pyharness-bundle-", dir=out.parent))
    try:
        staging.chmod(0o755)  # mkdtemp makes it private; a static server must read it
        _assemble(staging, root, pyodide_src, wheels, own, sandbox, request.requested())
        if out.exists():
            shutil.rmtree(out)
        staging.rename(out)
    finally:
        shutil.rmtree(own.parent, ignore_errors=True)
        shutil.rmtree(staging, ignore_errors=True)  # only left over when a step failed
    return out


def _assemble(dest: Path, root: Path, pyodide_src: Path, wheels: dict[str, Path],
              own: Path, sandbox: list[Path], requested: list[str]) -> None:
    py = dest / "pyodide"
    py.mkdir(parents=True)
    for name in PYODIDE_CORE:
        shutil.copy2(pyodide_src / name, py / name)
    upstream = json.loads((pyodide_src / "pyodide-lock.json").read_text())
    for wheel in WHEELS:
        shutil.copy2(wheels[wheel.name], py / wheel.file_name)
    shutil.copy2(own, py / own.name)
    # The standard library too: a bare boot spends most of its time compiling it.
    _precompile(pyodide_src, py, [py / "python_stdlib.zip"]
                + [py / w.file_name for w in WHEELS] + [py / own.name])
    from harness import __version__
    packages: dict[str, Any] = {}
    for wheel in WHEELS:  # hashes of the precompiled wheels, as served
        packages[wheel.name] = lock_entry(wheel.name, wheel.version, wheel.file_name,
                                          sha256_of(py / wheel.file_name), wheel.imports,
                                          wheel.depends)
    packages["pyharness"] = lock_entry("pyharness", __version__, own.name,
                                       sha256_of(py / own.name), ("harness",), ("pydantic",))
    lock = {"info": upstream["info"], "packages": packages}
    (py / "pyodide-lock.json").write_text(json.dumps(lock, indent=1, sort_keys=True))
    index = write_index(py, sandbox, upstream["info"], {w.file_name: w.sha256 for w in WHEELS})
    for name, src in embed_files(root).items():
        (dest / name).write_text(flat_imports(src.read_text()))
    _write_frame(root / "embed" / "sandbox" / "sandbox-frame.js", dest / "sandbox-frame.mjs")
    _bundle_json_schema(root, dest / "json-schema.mjs")
    _bundle_markdown_it(root, dest / "markdown-it.mjs")
    _bundle_mcp_sdk(root, dest / "mcp-sdk.mjs")
    _bundle_sandbox(root, dest / "sandbox.mjs")
    # The preview (embed/preview/): its guard document, served as it is, and the loader
    # that runs in the site's frame, with es-module-lexer (handed over as text).
    shutil.copy2(root / "embed" / "preview" / "preview.html", dest / "preview.html")
    _esbuild(root, root / "embed" / "preview" / "preview-loader.mjs", dest / "preview-loader.mjs",
             "the preview's loader (es-module-lexer)")
    # h.git(): isomorphic-git over h.fs, read only, loaded on the page when asked.
    _esbuild(root, root / "embed" / "git" / "git-summary.mjs", dest / "git-summary.mjs",
             "h.git() (isomorphic-git)", inject=root / "shell" / "buffer-shim.mjs")
    files = {str(p.relative_to(dest)): p.stat().st_size
             for p in sorted(dest.rglob("*")) if p.is_file()}
    manifest = {"pyharness": __version__, "pyodide": PYODIDE_VERSION,
                "bootPackages": list(BOOT_PACKAGES),
                "shellCommands": _shell_commands(dest / "sandbox.mjs"),
                "bootWheels": [f"pyodide/{packages[n]['file_name']}"
                               for n in _closure(packages, BOOT_PACKAGES)],
                "optionalWheels": {
                    name: [f"pyodide/{packages[n]['file_name']}"
                           for n in _closure(packages, (name,))]
                    for name in OPTIONAL_PACKAGES},
                **manifest_fields(index, py, requested),
                "files": files}
    (dest / "manifest.json").write_text(json.dumps(manifest, indent=1))
    _precompress(dest)


# Wheels are zip files already: gzip would not shrink them.
COMPRESSIBLE = (".mjs", ".js", ".wasm", ".json", ".ts", ".zip", ".html", ".css", ".svg")


def _precompress(dest: Path) -> None:
    """Write ``x.gz`` next to each compressible file, for servers that send a
    pre-compressed sibling (``pyharness serve`` does): the wire bytes drop without any
    compression work per request. Kept only where it saves at least a tenth."""
    for path in sorted(dest.rglob("*")):
        if path.is_file() and path.suffix in COMPRESSIBLE:
            data = path.read_bytes()
            packed = gzip.compress(data, compresslevel=9, mtime=0)
            if len(packed) <= 0.9 * len(data):
                path.with_name(path.name + ".gz").write_bytes(packed)


def _closure(packages: dict[str, Any], names: tuple[str, ...]) -> list[str]:
    """The packages ``names`` load, dependencies included, in a stable order."""
    seen: list[str] = []
    todo = list(names)
    while todo:
        name = todo.pop(0)
        if name not in seen:
            seen.append(name)
            todo.extend(packages[name]["depends"])
    return seen


def _precompile(pyodide_src: Path, out: Path, archives: list[Path]) -> None:
    """Replace the standard library's zip and each wheel by its bytecode-compiled form
    (see pycompile.mjs): imports in the browser then skip compiling source."""
    script = Path(__file__).with_name("pycompile.mjs")
    cmd = ["node", str(script), str(pyodide_src), str(out), *map(str, archives)]
    result = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        detail = (result.stderr or result.stdout)[-2000:]
        raise BuildError(f"precompiling the standard library and the wheels failed:\n{detail}")


def _bundle_sandbox(root: Path, out: Path) -> None:
    """just-bash + our filesystem adapter + the python3 runner as one module, which the
    sandbox worker imports (only when the page turns the shell on)."""
    if not (root / "node_modules" / "just-bash").is_dir():
        raise BuildError("just-bash is not installed in node_modules; run `npm ci` first")
    cmd = ["node", str(root / "shell" / "build.mjs"), str(out)]
    result = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if result.returncode != 0 or not out.exists():
        detail = (result.stderr or result.stdout).strip()
        raise BuildError(f"bundling the sandbox failed:\n{detail}")


def _bundle_json_schema(root: Path, out: Path) -> None:
    """@cfworker/json-schema (no eval, so it runs under a strict page CSP) as one module:
    the page checks page tools' inputs with it, loaded only when there are page tools."""
    entry = root / "node_modules" / "@cfworker" / "json-schema" / "dist" / "esm" / "index.js"
    _esbuild(root, entry, out, "@cfworker/json-schema")


def _bundle_markdown_it(root: Path, out: Path) -> None:
    """markdown-it as one module (the widget's markdown.mjs imports it relatively: the
    widget files are served unbundled)."""
    _esbuild(root, root / "node_modules" / "markdown-it" / "index.mjs", out, "markdown-it")


def _bundle_mcp_sdk(root: Path, out: Path) -> None:
    """The MCP TypeScript SDK's client (Streamable HTTP) as one module for the page
    (embed/page/mcp.mjs), loaded only when the page connects MCP servers."""
    if not (root / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir():
        raise BuildError("@modelcontextprotocol/sdk is not installed in node_modules; run `npm ci`")
    _esbuild(root, Path(__file__).with_name("mcp-sdk.entry.mjs"), out,
             "@modelcontextprotocol/sdk")


def _esbuild(root: Path, entry: Path, out: Path, what: str, inject: Path | None = None) -> None:
    """``entry`` and what it imports from node_modules as one minified ES module
    (``inject``: a module esbuild injects, e.g. the `Buffer` global)."""
    if not entry.exists():
        raise BuildError(f"{what} is not installed in node_modules; run `npm ci`")
    esbuild = root / "node_modules" / ".bin" / "esbuild"
    cmd = [str(esbuild), str(entry), "--bundle", "--format=esm", "--minify",
           "--legal-comments=none", "--target=es2022", "--platform=browser",
           f"--outfile={out}", "--log-level=warning",
           *([f"--inject:{inject}"] if inject else [])]
    result = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=root)
    if result.returncode != 0 or not out.exists():
        raise BuildError(f"bundling {what} failed:\n{result.stderr.strip()}")


def _shell_commands(sandbox: Path) -> list[str]:
    """The commands the sandbox's shell has (the system prompt lists them at boot, before
    any sandbox runs)."""
    script = ("const m = await import(process.argv[1]); "
              "process.stdout.write(JSON.stringify(m.COMMANDS));")
    cmd = ["node", "--input-type=module", "-e", script, sandbox.as_uri()]
    result = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise BuildError(f"listing the sandbox's commands failed:\n{result.stderr.strip()}")
    commands: list[str] = json.loads(result.stdout)
    return commands


def frame_hash(script: str) -> str:
    """The CSP source that allows exactly this inline script."""
    digest = hashlib.sha256(script.encode("utf-8")).digest()
    return "sha256-" + base64.b64encode(digest).decode("ascii")


def _write_frame(source: Path, out: Path) -> None:
    """The sandbox frame's inline script and its CSP hash, as a module for the page."""
    script = source.read_text(encoding="utf-8")
    out.write_text("// Generated by `pyharness build` from embed/sandbox/sandbox-frame.js.\n"
                   f"export const FRAME_SCRIPT = {json.dumps(script)};\n"
                   f"export const FRAME_HASH = {json.dumps(frame_hash(script))};\n",
                   encoding="utf-8")


def _pyodide_dir(root: Path) -> Path:
    src = root / "node_modules" / "pyodide"
    meta = src / "package.json"
    if not meta.exists():
        raise BuildError(f"Pyodide is not installed at {src}; run `npm ci` first")
    version = json.loads(meta.read_text()).get("version")
    if version != PYODIDE_VERSION:
        raise BuildError(f"node_modules has pyodide {version}, the bundle needs "
                         f"{PYODIDE_VERSION}; run `npm ci`")
    for name in (*PYODIDE_CORE, "pyodide-lock.json"):
        if not (src / name).exists():
            raise BuildError(f"{src / name} is missing; reinstall with `npm ci`")
    return src


def _build_own_wheel(root: Path) -> Path:
    """Build the harness's pure-Python wheel with a standard PEP 517 build."""
    outdir = Path(tempfile.mkdtemp(prefix="pyharness-wheel-"))
    # --no-isolation: the backend (hatchling) is pinned in the dev environment, so the
    # build needs no download and gives the same wheel every time.
    cmd = [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir",
           str(outdir), str(root)]
    result = subprocess.run(cmd, capture_output=True, text=True, check=False)
    built = sorted(outdir.glob("pyharness-*-py3-none-any.whl"))
    if result.returncode != 0 or len(built) != 1:
        raise BuildError(f"building the pyharness wheel failed:\n{result.stderr.strip()[-2000:]}")
    return built[0]
