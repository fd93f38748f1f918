"""The npm package in a bundled app, offline: `npm pack` the package, install the tarball
into a tiny Vite app (e2e/vite-app), `vite build` it for production, serve the output
with the project's static server and run a scripted turn through the API and through the
widget in Chromium. Then the same app under `vite dev`, and built without the plugin
(the bundle copied into the public directory, and `baseUrl`)."""

import json
import os
import shutil
import socket
import subprocess
import time
import urllib.request
from urllib.parse import urlsplit

import pytest

from e2e.conftest import BUNDLE, ROOT
from tooling.serve import StaticServer

VITE = ROOT / "node_modules" / "vite" / "bin" / "vite.js"


def run(cmd, cwd, env=None):
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False,
                          env={**os.environ, **(env or {})})
    assert done.returncode == 0, f"{' '.join(map(str, cmd))} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def vite_app(tmp_path_factory):
    """e2e/vite-app with the packed tarball installed, as a user's app gets it."""
    if not VITE.exists():
        pytest.fail(f"{VITE} is missing; run `npm ci` (vite is a pinned devDependency)")
    work = tmp_path_factory.mktemp("vite")
    package = work / "package"  # package.json and the bundle as dist/, as in the repo
    package.mkdir()
    shutil.copy2(ROOT / "package.json", package)
    shutil.copytree(BUNDLE, package / "dist")
    tarball = work / run(["npm", "pack", "--pack-destination", str(work)], package).split()[-1]
    app = work / "app"
    shutil.copytree(ROOT / "e2e" / "vite-app", app)
    run(["npm", "install", "--offline", "--no-audit", "--no-fund", str(tarball)], app)
    installed = app / "node_modules" / "@pyharness" / "embed"
    assert (installed / "dist" / "pyodide" / "pyodide.asm.wasm").is_file()
    assert not installed.is_symlink()
    return app


def exercise(page, url):
    """Open the app; the API turn and a widget turn must both work."""
    requests = []
    page.on("request", lambda r: requests.append(r.url))
    page.on("console", lambda m: print(f"[console.{m.type}] {m.text}"))
    page.goto(url)
    page.wait_for_function("document.getElementById('api').textContent.startsWith('{')", timeout=90_000)
    api = json.loads(page.inner_text("#api"))
    assert api.get("error") is None, api
    done = api["done"]
    assert (done["text"], done["stopReason"], done["usage"]["requests"]) == ("Done.", "stop", 2)
    assert api["file"] == "bundled by vite\n"
    chat = page.locator("pyharness-chat")
    page.wait_for_function("document.getElementById('chat').dataset.state === 'ready'", timeout=90_000)
    chat.locator("textarea").fill("write widget.txt")
    chat.locator("textarea").press("Enter")
    chat.locator(".entry.file[data-path='widget.txt']").wait_for(timeout=60_000)
    page.wait_for_function("document.getElementById('chat').shadowRoot.querySelector('[role=log]').textContent.includes('works in a Vite build')")
    assert chat.locator("details.tool").get_attribute("data-state") == "ok"
    return requests


def test_production_build_serves_and_runs(vite_app, page):
    started = time.monotonic()
    run(["node", str(VITE), "build"], vite_app)
    out = vite_app / "dist"
    chunks = list((out / "assets").glob("index-*.js"))
    assert len(chunks) == 1, list(out.rglob("*"))
    # the runtime, copied unchanged next to the chunk (the plugin), with its fixed names
    for name in ("worker.mjs", "http.mjs", "sandbox-client.mjs", "persist.mjs", "protocol.mjs", "sandbox.mjs", "manifest.json", "pyodide/pyodide.mjs",
                 "pyodide/pyodide.asm.wasm", "pyodide/pyodide-lock.json"):
        assert (out / "assets" / name).read_bytes() == (BUNDLE / name).read_bytes(), name
    print(f"vite build: {time.monotonic() - started:.1f}s")

    srv = StaticServer({"/": out}).start()
    try:
        requests = exercise(page, f"{srv.url}/")
    finally:
        srv.stop()
    origin = urlsplit(srv.url).netloc
    assert [u for u in requests if urlsplit(u).netloc != origin] == []
    paths = {urlsplit(u).path for u in requests}
    assert {"/assets/worker.mjs", "/assets/manifest.json", "/assets/pyodide/pyodide.asm.wasm"} <= paths
    assert not any("node_modules" in p for p in paths)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_dev_server_runs(vite_app, page):
    """`vite dev` with the plugin, on a cross-origin-isolated page (the app's
    server.headers send COOP/COEP, which the plugin's runtime files carry too)."""
    port = free_port()
    proc = subprocess.Popen(["node", str(VITE), "--config", "vite.isolated.config.mjs", "--port",
                             str(port), "--strictPort", "--host", "127.0.0.1"],
                            cwd=vite_app, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(url, timeout=2) as response:
                    assert response.status == 200
                    break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, "vite dev did not start"
                time.sleep(0.2)
        requests = exercise(page, url)
        assert page.evaluate("crossOriginIsolated") is True
    finally:
        proc.terminate()
        output = proc.communicate(timeout=10)[0]
        print(output)
    # served from the installed package, beside the module (not pre-bundled into .vite/)
    assert any(u.endswith("/node_modules/@pyharness/embed/dist/worker.mjs") for u in requests)
    assert "error" not in output.lower(), output


def test_without_the_plugin_a_copy_and_base_url(vite_app, page):
    public = vite_app / "public-copy" / "pyharness"
    shutil.copytree(vite_app / "node_modules" / "@pyharness" / "embed" / "dist", public)
    run(["node", str(VITE), "build", "--config", "vite.copy.config.mjs"], vite_app,
        env={"VITE_PYHARNESS_BASE_URL": "/pyharness/"})
    out = vite_app / "dist-copy"
    assert not (out / "assets" / "worker.mjs").exists()
    srv = StaticServer({"/": out}).start()
    try:
        requests = exercise(page, f"{srv.url}/")
    finally:
        srv.stop()
    paths = {urlsplit(u).path for u in requests}
    assert {"/pyharness/worker.mjs", "/pyharness/pyodide/pyodide.asm.wasm"} <= paths


def test_the_plugin_takes_the_runtime_from_an_own_bundle(vite_app, tmp_path):
    # A bundle of the app's own (as `pyharness build --package ...` makes it), told apart
    # from the package's runtime by one more wheel in its package index.
    own = tmp_path / "python-dist"
    shutil.copytree(BUNDLE, own)
    marker = "own_package-1.0-py3-none-any.whl"
    (own / "pyodide" / marker).write_bytes(b"PK\x05\x06" + b"\0" * 18)
    run(["node", str(VITE), "build", "--config", "vite.bundle.config.mjs"], vite_app,
        env={"PYHARNESS_VITE_BUNDLE": str(own)})
    assets = vite_app / "dist-bundle" / "assets"
    assert (assets / "pyodide" / marker).is_file()
    assert (assets / "pyodide" / "sandbox-lock.json").read_bytes() == \
        (own / "pyodide" / "sandbox-lock.json").read_bytes()
    # Another version's bundle is refused, naming both.
    manifest = json.loads((own / "manifest.json").read_text())
    (own / "manifest.json").write_text(json.dumps({**manifest, "pyharness": "0.0.1"}))
    done = subprocess.run(["node", str(VITE), "build", "--config", "vite.bundle.config.mjs"],
                          cwd=vite_app, capture_output=True, text=True, check=False,
                          env={**os.environ, "PYHARNESS_VITE_BUNDLE": str(own)})
    assert done.returncode != 0 and "is pyharness 0.0.1" in done.stdout + done.stderr
