"""Embedding without a bundler: a plain HTML page imports the bundle's pyharness.mjs and
widget.mjs as served, runs a turn through the API and one through the widget. The same
page from `pyharness serve --isolate` with pre-compressed assets."""

import gzip
import json
import shutil
from urllib.parse import urlsplit

import pytest

from e2e.conftest import BUNDLE, ROOT
from tooling.serve import StaticServer


def run_page(page, url):
    requests, responses = [], {}
    page.on("request", lambda r: requests.append(r.url))
    # every response per URL: the page boots two harnesses, and the second fetch of a file
    # may be a revalidation
    page.on("response", lambda r: responses.setdefault(r.url, []).append(r))
    page.on("console", lambda m: print(f"[console.{m.type}] {m.text}"))
    page.goto(url)
    page.wait_for_function("document.getElementById('api').textContent.startsWith('{')", timeout=60_000)
    api = json.loads(page.inner_text("#api"))
    chat = page.locator("pyharness-chat")
    page.wait_for_function("document.getElementById('chat').dataset.state === 'ready'", timeout=60_000)
    chat.locator("textarea").fill("list the files")
    chat.locator("textarea").press("Enter")
    page.wait_for_function("document.getElementById('chat').shadowRoot.querySelector('[role=log]').textContent.includes('without a bundler')", timeout=60_000)
    page.wait_for_function("document.getElementById('chat').dataset.state === 'ready'")
    return api, requests, responses


def test_plain_page_runs_a_turn_through_the_api_and_the_widget(page, server):
    api, requests, _ = run_page(page, f"{server.url}/script-tag.html")
    done = api["done"]
    assert (done["text"], done["stopReason"], done["usage"]["requests"]) == ("Done.", "stop", 2)
    assert api["out"] == "copied: from the page\n"
    assert api["types"][0] == "run_start" and api["types"][-1] == "run_end"
    assert api["isolated"] is False and api["reported"] is False
    card = page.locator("pyharness-chat details.tool")
    assert card.get_attribute("data-state") == "ok"
    # one boot each: the widget waited for the page's scripts to set its options
    assert sum(u.endswith("/pyharness/worker.mjs") for u in requests) == 2
    origin = urlsplit(server.url).netloc
    assert [u for u in requests if urlsplit(u).netloc != origin] == []


@pytest.fixture(scope="module")
def compressed_bundle(tmp_path_factory):
    """The bundle with .gz siblings of its large files (as a host would pre-compress)."""
    root = tmp_path_factory.mktemp("gz") / "bundle"
    shutil.copytree(BUNDLE, root)
    for name in ("pyodide/pyodide.asm.wasm", "pyodide/pyodide.asm.mjs", "sandbox.mjs", "worker.mjs"):
        (root / f"{name}.gz").write_bytes(gzip.compress((root / name).read_bytes(), 6))
    return root


@pytest.mark.fresh_context  # the first fetch of each file is checked
def test_isolated_and_precompressed(page, compressed_bundle):
    srv = StaticServer({"/": ROOT / "e2e" / "pages", "/pyharness/": compressed_bundle},
                       isolate=True).start()
    try:
        api, _, responses = run_page(page, f"{srv.url}/script-tag.html")
    finally:
        srv.stop()
    assert api["isolated"] is True  # COOP/COEP: SharedArrayBuffer is available
    assert api["reported"] is True  # h.containment.crossOriginIsolated
    assert api["out"] == "copied: from the page\n"
    for name, kind in (("pyodide/pyodide.asm.wasm", "application/wasm"), ("worker.mjs", "text/javascript")):
        # What the server sent, as it sent it: the first fetch of the fresh context is a
        # full response, gzip because the browser asked for it (a later one revalidates).
        # The page ran, so the browser took the bodies. (Playwright's own view of a
        # worker's response sometimes lacks its raw headers on a loaded machine.)
        sent = [h for path, status, h in srv.responses
                if path == f"/pyharness/{name}" and status == 200]
        assert sent, name
        assert sent[0]["content-encoding"] == "gzip", name
        assert sent[0]["content-type"].startswith(kind), name
        assert any(r.status in (200, 304) for r in responses[f"{srv.url}/pyharness/{name}"])
