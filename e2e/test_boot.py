"""Booting from the bundle, and every kind of boot failure naming its step. The page side of
the rows is e2e/pages/rows/boot.mjs."""

import shutil

import pytest

from e2e.conftest import BUNDLE, call


@pytest.fixture(scope="session")
def broken_bundle(tmp_path_factory):
    """A copy of the bundle with pydantic-core's wheel missing (a 404 that Pyodide's
    loadPackage reports only through its error callback)."""
    root = tmp_path_factory.mktemp("broken")
    shutil.copytree(BUNDLE, root, dirs_exist_ok=True)
    for wheel in (root / "pyodide").glob("pydantic_core-*.whl"):
        wheel.unlink()
    return root


def test_boot_reports_progress_and_versions(app):
    r = call(app, "boot.progressAndVersions")
    names = [(s["step"], s["state"]) for s in r["steps"]]
    assert names == [(n, st) for n in ("manifest", "runtime", "packages", "storage", "harness")
                     for st in ("start", "done")]
    runtime = next(s for s in r["steps"] if s["step"] == "runtime")
    assert runtime["bytes"] > 10_000_000
    assert r["versions"] == {"pyharness": "0.1.0", "pyodide": "314.0.7"}


def test_bad_base_url_names_the_step(app):
    r = call(app, "boot.settleBoot", {"baseUrl": "/nowhere/"})
    assert r["ok"] is False and r["code"] == "EBOOT"
    assert "step 'worker'" in r["message"] and "/nowhere/worker.mjs" in r["message"]
    assert "baseUrl" in r["message"]


def test_bad_options_name_the_option(app):
    r = [call(app, "boot.settleBoot", {"model": {"api": "gpt-9"}}),
         call(app, "boot.settleBoot", {"maxSteps": -1})]
    assert all(x["code"] == "EBOOT" for x in r)
    assert "'harness'" in r[0]["message"] and "'model'" in r[0]["message"]
    assert "'maxSteps'" in r[1]["message"]


def test_missing_wheel_fails_the_boot_loudly(app, server, broken_bundle):
    server.add_mount("/broken/", broken_bundle)
    r = call(app, "boot.settleBoot", {"baseUrl": "/broken/"})
    assert r["ok"] is False and r["code"] == "EBOOT"
    assert "'packages'" in r["message"] and "pyharness build" in r["message"]
    assert "pydantic" in r["message"]
