"""Browser tier: real Debian Chromium driven by pytest-playwright, the built bundle served
from a local static server on 127.0.0.1, and the scripted model (no network)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tooling.provider_server import ProviderServer
from tooling.serve import StaticServer

ROOT = Path(__file__).resolve().parents[1]
BUNDLE = Path(os.environ.get("PYHARNESS_BUNDLE", ROOT / "dist"))
CHROMIUM = os.environ.get("PYHARNESS_CHROMIUM", "/usr/bin/chromium")
FLAGS = [
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    # performance.measureUserAgentSpecificMemory (the soak's memory figure) measures at
    # once instead of at a random moment up to 20 s later (a guard against timing
    # attacks that a test browser does not need): it cost the soak row 40 s of waiting.
    "--enable-blink-features=ForceEagerMeasureMemory",
    # More flags from the environment: `make e2e` gives the parallel rows
    # --js-flags=--liftoff-only (the Makefile says why).
    *os.environ.get("PYHARNESS_E2E_FLAGS", "").split(),
]


# A row's page code lives in an ES module under e2e/pages/rows/, which Biome lints, not in a
# Python string. call(page, "fs.binaryRoundTripAllByteValues", *args) imports /rows/fs.mjs
# (once a page: it is kept as window.rows.fs) and returns what that export gives for args
# (JSON values both ways; a promise is awaited); wait_for polls a synchronous export until it
# gives a truthy value. Playwright's evaluate has no deadline of its own, so call races the
# export against `timeout` ms: a promise that never settles fails the row, naming it.
_IMPORT_ROWS = "async (file) => { (window.rows ??= {})[file] ??= await import(`/rows/${file}.mjs`); }"
_CALL_ROW = "([file, name, args]) => window.rows[file][name](...args)"
_CALL_ROW_BY = """([file, name, args, ms]) => Promise.race([
  window.rows[file][name](...args),
  new Promise((_, reject) => setTimeout(
    () => reject(new Error(`${file}.${name} did not settle within ${ms} ms`)), ms)),
])"""


def call(page: Any, name: str, *args: Any, timeout: float = 150_000) -> Any:
    """Run export `name` ("file.export") of e2e/pages/rows/<file>.mjs on the page."""
    file, export = name.split(".")
    page.evaluate(_IMPORT_ROWS, file)
    return page.evaluate(_CALL_ROW_BY, [file, export, list(args), timeout])


AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
_AXE_RUN = """async (selector) => {
  const result = await axe.run(document.querySelector(selector), {
    runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"] },
  });
  return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help,
                                          nodes: v.nodes.slice(0, 3).map((n) => n.target) }));
}"""


def axe_violations(page: Any, selector: str = "pyharness-chat") -> list[dict[str, Any]]:
    """axe-core's WCAG 2.2 A/AA violations in the element matched by ``selector``, its
    open shadow root included (axe-core from npm, injected into the page)."""
    page.add_script_tag(path=str(AXE))
    return page.evaluate(_AXE_RUN, selector)  # type: ignore[no-any-return]


def wait_for(page: Any, name: str, *args: Any, timeout: float = 30_000) -> None:
    """Wait until the synchronous export `name` of e2e/pages/rows/ gives a truthy value."""
    file, export = name.split(".")
    page.evaluate(_IMPORT_ROWS, file)
    page.wait_for_function(_CALL_ROW, arg=[file, export, list(args)], timeout=timeout)


def pytest_configure(config: pytest.Config) -> None:
    # `make e2e` runs the rows in two processes (pytest-xdist, one Chromium each), then the
    # rows marked serial alone: those that assert a time (a timer's worst gap, how fast an
    # abort settles), which a second browser on the same two cores would disturb.
    config.addinivalue_line("markers", "serial: runs alone, after the parallel rows")
    config.addinivalue_line("markers", "bench_smoke: the bench's own rows (make bench-smoke)")
    config.addinivalue_line("markers", "fresh_context: a browser context of its own (see "
                            "`context` in e2e/conftest.py)")
    # Fail loudly instead of skipping: the browser tier must really run.
    if not (BUNDLE / "pyharness.mjs").exists():
        raise pytest.UsageError(f"no bundle at {BUNDLE}; run `make build` first")
    if shutil.which(CHROMIUM) is None:
        raise pytest.UsageError(f"{CHROMIUM} not found; `apt-get install -y chromium`")


# The order the rows are collected in. pytest-xdist's worksteal gives the first process the
# first half of the collection and the second the rest, and a process that runs out
# steals the end of the other's queue. First the files whose module-scoped fixtures are
# costly (one run of every attack, 12 s; the approval batches; the sandbox's and pip's
# pages), all in the first half and at the front of its queue, where no steal splits
# them (a split file sets its fixtures up in both processes); then the files whose rows
# take longest (7-16 s a row alone, measured per row with --durations), so that the two
# processes end on short rows, together. Each file's rows stay together and in order.
FIRST = ("test_approval_truth.py", "test_containment.py", "test_sandbox_lifetime.py",
         "test_packages.py", "test_second_tab.py", "test_demo.py", "test_vite.py",
         "test_robustness.py", "test_mcp.py", "test_widget_attachments.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(FIRST)))


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    args = list(FLAGS)
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        args.append("--no-sandbox")
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "headless": True,
            "args": args}


@pytest.fixture(scope="session")
def _shared_context(browser: Any, browser_context_args: dict[str, Any],
                    server: StaticServer) -> Iterator[tuple[Any, Any, set[str]]]:
    """One browser context for the rows of a process, with a page of the test server's
    site kept open in it: a row's page then starts in that page's renderer process,
    whose WebAssembly the browser has already compiled, instead of a new process (a boot
    cost 2.4 CPU-s in a new context, 1.4 here; the rows' time was mostly such boots). The
    set gathers the origins the rows reached, whose storage `context` clears after each."""
    ctx = browser.new_context(**browser_context_args)
    origins: set[str] = set()
    ctx.on("request", lambda r: origins.add(_origin(r.url)))
    keeper = ctx.new_page()
    keeper.goto(f"{server.url}/index.html")
    yield ctx, keeper, origins
    ctx.close()


def _origin(url: str) -> str:
    scheme, _, rest = url.partition("://")
    return f"{scheme}://{rest.split('/', 1)[0]}" if scheme in ("http", "https") else ""


@pytest.fixture
def context(request: pytest.FixtureRequest, new_context: Any) -> Iterator[Any]:
    """The row's browser context (pytest-playwright's `page` is a new page of it): the
    process's shared context, left as a new one would be after the row (its pages
    closed; the cookies, permissions and every kind of storage of each origin it reached
    cleared: OPFS, IndexedDB, localStorage, caches, service workers). Only the HTTP cache
    is kept. A row marked fresh_context (one that checks a first visit) or serial (one
    that times the page: pages of one renderer process share its main thread and its
    JavaScript heap) gets a new context."""
    if any(request.node.get_closest_marker(m) for m in ("fresh_context", "serial")):
        yield new_context()
        return
    ctx, keeper, origins = request.getfixturevalue("_shared_context")
    yield ctx
    for page in ctx.pages:
        if page != keeper:
            page.close()
    ctx.clear_cookies()
    ctx.clear_permissions()
    cdp = ctx.new_cdp_session(keeper)
    for origin in sorted(origins - {""}):
        cdp.send("Storage.clearDataForOrigin", {"origin": origin, "storageTypes": "all"})
    cdp.detach()
    origins.clear()


@pytest.fixture(scope="session")
def server() -> Iterator[StaticServer]:
    srv = StaticServer({"/": ROOT / "e2e" / "pages", "/pyharness/": BUNDLE,
                        "/demo/": ROOT / "demo"}).start()
    yield srv
    srv.stop()


@pytest.fixture(scope="session")
def _provider_server() -> Iterator[ProviderServer]:
    srv = ProviderServer().start()
    yield srv
    srv.stop()


@pytest.fixture
def provider(_provider_server: ProviderServer) -> ProviderServer:
    """The scripted OpenAI/Anthropic wire-format server on loopback, reset per test."""
    _provider_server.reset()
    return _provider_server


@pytest.fixture
def app(page: Any, server: StaticServer) -> Any:
    """A page with the pyharness module loaded, and a log of every request it made."""
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.on("console", lambda m: print(f"[console.{m.type}] {m.text}"))
    page.goto(f"{server.url}/index.html")
    page.wait_for_function("window.pyharness !== undefined")
    page.requests = requests
    return page


@pytest.fixture
def widget(page: Any, server: StaticServer) -> Any:
    """The widget test page: window.mount(attributes, options, suggestions) puts a
    configured <pyharness-chat> on it (e2e/pages/widget.html)."""
    page.on("console", lambda m: print(f"[console.{m.type}] {m.text}"))
    page.on("pageerror", lambda e: print(f"[pageerror] {e}"))
    page.goto(f"{server.url}/widget.html")
    page.wait_for_function("document.body.dataset.loaded === 'yes'")
    return page
