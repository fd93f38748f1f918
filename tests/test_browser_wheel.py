"""The wheel the browser loads holds only what the worker imports: harness/, never the
development tools (tooling/: build, bench, serve, the CLI, the schema writer, the scripted
provider server) nor the sandbox's runner (shell/pyexec.py)."""

import importlib.util
import json
import os
import shutil
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BUNDLE = Path(os.environ.get("PYHARNESS_BUNDLE", ROOT / "dist"))
# A path part (a package or a module's stem) that names a development module.
DEV_PARTS = {"tooling", "build", "bench", "serve", "cli", "provider_server", "schema",
             "pyexec", "pyharness_net"}
DEV_FILES = (".mjs", ".js", ".html")  # the bench page, the build's Node scripts


def dev_entries(names: list[str]) -> list[str]:
    """The entries of a wheel that are development modules or lie outside harness/."""
    bad = []
    for name in names:
        top, *rest = name.split("/")
        if top.endswith(".dist-info") and top.startswith("pyharness-"):
            continue
        stems = {Path(part).name.split(".")[0] for part in (top, *rest)}
        if top != "harness" or stems & DEV_PARTS or name.endswith(DEV_FILES):
            bad.append(name)
    return bad


def harness_modules(suffix: str) -> set[str]:
    """Every module of the checkout's harness/, as the wheel names it."""
    return {str(p.relative_to(ROOT).with_suffix(suffix)) for p in (ROOT / "harness").rglob("*.py")}


def test_the_check_names_every_kind_of_development_module():
    assert dev_entries(["harness/agent.pyc", "harness/tools/page.pyc",
                        "pyharness-0.1.0.dist-info/RECORD"]) == []
    assert dev_entries(["tooling/cli.py", "harness/build/bundle.pyc", "harness/serve.pyc",
                        "harness/models/provider_server.pyc", "harness/pyexec.py",
                        "harness/bench/page/bench.mjs", "harness/schema.pyc",
                        "shell/pyexec.py"]) == [
        "tooling/cli.py", "harness/build/bundle.pyc", "harness/serve.pyc",
        "harness/models/provider_server.pyc", "harness/pyexec.py",
        "harness/bench/page/bench.mjs", "harness/schema.pyc", "shell/pyexec.py"]


@pytest.mark.skipif(sys.platform == "emscripten", reason="builds a wheel (CPython)")
def test_the_wheel_the_build_makes_holds_harness_only():
    """The build's own step (``_build_own_wheel``: a PEP 517 build of this checkout)."""
    from tooling.build.bundle import _build_own_wheel

    wheel = _build_own_wheel(ROOT)
    try:
        names = zipfile.ZipFile(wheel).namelist()
    finally:
        shutil.rmtree(wheel.parent, ignore_errors=True)
    assert dev_entries(names) == []
    assert {n for n in names if n.startswith("harness/")} == harness_modules(".py")


def _built_wheel() -> Path:
    wheels = sorted((BUNDLE / "pyodide").glob("pyharness-*-py3-none-any.whl"))
    if not wheels:
        pytest.skip(f"no bundle at {BUNDLE} (make build)")
    assert len(wheels) == 1, wheels
    return wheels[0]


@pytest.mark.skipif(sys.platform == "emscripten", reason="reads the checkout's dist/")
def test_the_bundles_wheel_holds_harness_only():
    """The wheel as served (dist/pyodide/, precompiled to bytecode), and the one the
    worker's boot loads (manifest.json's bootWheels)."""
    wheel = _built_wheel()
    names = zipfile.ZipFile(wheel).namelist()
    assert dev_entries(names) == [], f"{wheel} ships development modules; rebuild: make build"
    assert {n for n in names if n.startswith("harness/")} == harness_modules(".pyc"), (
        f"{wheel} is not this checkout's harness/; rebuild: make build")
    manifest = json.loads((BUNDLE / "manifest.json").read_text())
    assert f"pyodide/{wheel.name}" in manifest["bootWheels"]


@pytest.mark.skipif(sys.platform != "emscripten", reason="the harness as the bundle loads it")
def test_the_loaded_harness_has_no_development_modules():
    import harness

    package = Path(harness.__file__).parent
    names = [str(p.relative_to(package.parent)) for p in package.rglob("*") if p.is_file()]
    assert dev_entries([n for n in names if "__pycache__" not in n]) == []
    assert importlib.util.find_spec("tooling") is None


@pytest.mark.skipif(sys.platform != "emscripten", reason="the bundle's standard library")
def test_bundle_stdlib_is_bytecode_and_tracebacks_name_the_source():
    import json.decoder
    import traceback

    assert json.decoder.__file__.endswith(".pyc")
    try:
        json.loads("{")
    except ValueError as exc:
        frames = traceback.extract_tb(exc.__traceback__)
    last = frames[-1]
    assert last.filename.endswith(".zip/json/decoder.py")
    assert last.lineno is not None and last.lineno > 0
