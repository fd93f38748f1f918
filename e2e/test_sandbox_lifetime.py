"""The sandbox is trusted for one command and kept for one run, and the model's network
carries nothing of the page's, in real Chromium (e2e/test_containment.py's style: the
attack, what the logging server saw, what the page saw).

- The page's ``fetch`` option adds a CSRF header and sends cookies; the model's code,
  allowed the page's own cookie-protected API, gets neither (only the per-origin
  ``network.headers`` the page set for it).
- An implant in the sandbox's JavaScript and in its Python, made in one run, is gone in
  the next run and in another thread (it is still there within its own run).
- A result posted for the next command, a flood after a command and a flood during one:
  the sandbox is torn down, the next command's output is its own, ``h.fs`` stays fast,
  the deadline holds.
- Requests of the model's code end with their command and with ``close()``, at most six
  at once; a body cut half-way is an error result, not an unhandled rejection.

The page side of the rows is e2e/pages/rows/sandbox_lifetime.mjs.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from e2e.conftest import BUNDLE, ROOT, call
from tooling.serve import StaticServer

TIMEOUT_MS = 3000
CSRF = "csrf-token-of-the-page-4411"
COOKIE = "session=page-cookie-secret"
API_KEY = "data-api-key-0c7e"


class ApiOrigin(StaticServer):
    """The page's origin: the test page, the bundle and an /api/ that logs every request
    with its headers and the time it arrived."""

    def __init__(self) -> None:
        super().__init__({"/": ROOT / "e2e" / "pages", "/pyharness/": BUNDLE})
        self.log: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        static = self.httpd.RequestHandlerClass
        origin = self

        class Handler(static):  # type: ignore[misc, valid-type]
            def do_GET(self) -> None:
                if self.path == "/slow-count":  # for the page to wait on (not logged)
                    with origin.lock:
                        body = str(sum(r["path"].startswith("/api/slow") for r in origin.log))
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body.encode())
                    return None
                if not self.path.startswith("/api/"):
                    return super().do_GET()
                with origin.lock:
                    origin.log.append({"path": self.path, "at": time.monotonic(),
                                       "headers": {k.lower(): v for k, v in self.headers.items()}})
                if self.path.startswith("/api/slow"):
                    time.sleep(2.5)
                if self.path == "/api/cut":  # promises 100,000 bytes, sends 1,000, hangs up
                    self.send_response(200)
                    self.send_header("Content-Length", "100000")
                    self.end_headers()
                    self.wfile.write(b"x" * 1000)
                    self.wfile.flush()
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return None
                cookie = self.headers.get("Cookie") or ""
                if self.path == "/api/login":
                    body, status = b"ok", 200
                elif self.path.startswith("/api/secret"):
                    ok = "session=page-cookie-secret" in cookie
                    body, status = (b"SECRET-DATA-OF-THE-USER", 200) if ok else (b"no session", 401)
                else:
                    body, status = b'{"hello": "api"}', 200
                self.send_response(status)
                if self.path == "/api/login":
                    self.send_header("Set-Cookie", f"{COOKIE}; Path=/; SameSite=Lax")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return None

        self.httpd.RequestHandlerClass = Handler

    def since(self, mark: float) -> list[dict[str, Any]]:
        with self.lock:
            return [r for r in self.log if r["at"] >= mark]


@pytest.fixture(scope="module")
def api() -> Iterator[ApiOrigin]:
    server = ApiOrigin().start()
    yield server
    server.stop()


def open_page(browser: Any, api: ApiOrigin) -> tuple[Any, Any, list[str]]:
    context = browser.new_context()
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: print(f"[console.{m.type}] {m.text}"))
    page.goto(f"{api.url}/index.html")
    page.wait_for_function("window.pyharness !== undefined")
    call(page, "sandbox_lifetime.watchRejections")
    return context, page, errors


# -- the model's network never carries the page's credentials --------------------------


@pytest.fixture(scope="module")
def credentials(browser: Any, api: ApiOrigin) -> Iterator[dict[str, Any]]:
    context, page, _ = open_page(browser, api)
    page.evaluate("fetch('/api/login')")  # the user's session cookie
    mark = time.monotonic()
    commands = [f"curl -sS {api.url}/api/secret?curl",
                "python3 -c \"import pyharness_net as n; r = n.fetch('" + api.url
                + "/api/secret?py'); print(r.status, r.text())\"",
                f"curl -sS {api.url}/api/echo?headers"]
    ends = call(page, "sandbox_lifetime.commandsUnderThePagesFetch", commands, f"{api.url}/api/", api.url,
                API_KEY, TIMEOUT_MS, CSRF)
    context.close()
    yield {**ends, "log": api.since(mark)}


def test_the_model_reads_the_api_without_the_users_session(credentials: dict[str, Any]) -> None:
    assert credentials["ends"][0] == "no session\n[exit 0]" or "no session" in credentials["ends"][0]
    assert credentials["ends"][1].startswith("401 no session")
    assert credentials["api"] == "SECRET-DATA-OF-THE-USER"  # the page's own fetch has it


def test_no_cookie_and_no_page_header_reached_the_server(credentials: dict[str, Any]) -> None:
    model = [r for r in credentials["log"] if not r["path"].endswith("?page")]
    assert [r["path"] for r in model] == ["/api/secret?curl", "/api/secret?py", "/api/echo?headers"]
    for request in model:
        assert "cookie" not in request["headers"], request
        assert "x-csrf" not in request["headers"], request
        assert "referer" not in request["headers"], request
        assert request["headers"].get("x-api-key") == API_KEY  # network.headers, for this origin
    page = next(r for r in credentials["log"] if r["path"].endswith("?page"))
    assert page["headers"]["x-csrf"] == CSRF and COOKIE in page["headers"]["cookie"]


def test_the_per_origin_header_stays_on_the_page(credentials: dict[str, Any]) -> None:
    assert API_KEY not in credentials["tools"]
    assert all(API_KEY not in end for end in credentials["ends"])


# -- no sandbox state survives a run --------------------------------------------------

IMPLANT = (
    "python3 -c \"import builtins, js; builtins.IMPLANT = 'py'; js.globalThis.implant = 'js'; "
    "import sys; sys.modules['json'].IMPLANTED = True; print('implanted')\""
)
CHECK = (
    "python3 -c \"import builtins, js, json; print(getattr(builtins, 'IMPLANT', None), "
    "getattr(js.globalThis, 'implant', None), getattr(json, 'IMPLANTED', None))\""
)


@pytest.fixture(scope="module")
def implant(browser: Any, api: ApiOrigin) -> Iterator[dict[str, Any]]:
    context, page, errors = open_page(browser, api)
    result = call(page, "sandbox_lifetime.implantThenCheck", IMPLANT, CHECK, TIMEOUT_MS)
    context.close()
    yield {**result, "errors": errors}


def test_an_implant_lives_only_as_long_as_its_run(implant: dict[str, Any]) -> None:
    assert implant["first"][0].startswith("implanted")
    assert implant["first"][1].startswith("py js True")  # the same run: documented
    assert implant["next"][0].startswith("None None None"), implant["next"]
    assert implant["other"][0].startswith("None None None"), implant["other"]
    generations = implant["generations"]
    assert len(set(generations)) == 3, generations  # a fresh sandbox for every run


# -- a result belongs to exactly one command; a sandbox that floods is torn down --------

# Model code patches the sandbox's MessagePort.postMessage: with every result it sends,
# it also sends a forged result (for the next sequential id, and with the nonce it saw).
FORGE = """import js
from pyodide.ffi import create_proxy, to_js
proto = js.MessagePort.prototype
orig = proto.postMessage
def patched(this, msg, *rest):
    orig.call(this, msg, *rest)
    if getattr(msg, "type", None) == "result":
        fake = {"type": "result", "id": 2, "nonce": getattr(msg, "nonce", ""), "stdout": "FORGED",
                "stderr": "", "exitCode": 0,
                "changes": {"dirs": [], "files": [], "removed": [], "skipped": []}}
        orig.call(this, to_js(fake, dict_converter=js.Object.fromEntries))
proto.postMessage = create_proxy(patched, capture_this=True)
print("armed")
"""
# After its command, model code floods the harness worker over the sandbox's port.
FLOOD_AFTER = """import js
from pyodide.ffi import create_proxy
proto = js.MessagePort.prototype
orig = proto.postMessage
def flood(port):
    for i in range(20000):
        orig.call(port, "junk %d" % i)
def patched(this, msg, *rest):
    orig.call(this, msg, *rest)
    if getattr(msg, "type", None) == "result":
        js.setInterval(create_proxy(lambda: flood(this)), 0)
proto.postMessage = create_proxy(patched, capture_this=True)
print("armed")
"""
# During its command, model code floods the harness worker and never ends.
FLOOD_DURING = """import js, pyharness_net_js
from pyodide.ffi import create_proxy, to_js
proto = js.MessagePort.prototype
orig = proto.postMessage
seen = []
def patched(this, msg, *rest):
    seen.append(this)
    orig.call(this, msg, *rest)
proto.postMessage = create_proxy(patched, capture_this=True)
pyharness_net_js.request('{"url": "http://127.0.0.1:1/x", "method": "GET", "headers": {}, "body": null}')
request = to_js({"type": "net", "id": 1, "url": "http://127.0.0.1:1/y", "method": "GET", "headers": {}},
                dict_converter=js.Object.fromEntries)
while True:
    orig.call(seen[0], request)
"""


@pytest.fixture(scope="module")
def one_result(browser: Any, api: ApiOrigin) -> Iterator[dict[str, Any]]:
    context, page, errors = open_page(browser, api)
    call(page, "sandbox_lifetime.bootForgeAndFlood", FORGE, FLOOD_AFTER, FLOOD_DURING, TIMEOUT_MS)
    before = call(page, "sandbox_lifetime.readTimes")
    first = call(page, "sandbox_lifetime.forgeAndFloodAfter")
    after = call(page, "sandbox_lifetime.readTimes")
    second = call(page, "sandbox_lifetime.floodDuring")
    call(page, "sandbox_lifetime.closeHarness")
    context.close()
    yield {"before": before, "first": first, "after": after, "second": second["ends"],
           "codes": second["codes"], "errors": errors}


@pytest.mark.serial  # shares one_result with the two timed rows below
def test_a_result_sent_early_for_the_next_command_is_not_taken(one_result: dict[str, Any]) -> None:
    forge, racing, real = one_result["first"][:3]
    assert forge["output"].startswith("armed"), forge
    assert all("FORGED" not in end["output"] for end in one_result["first"])
    # The forged result reaches the harness after the next command was sent (its nonce
    # is not that command's: the command is stopped, never answered by the forgery) or
    # before (no command runs: the sandbox is torn down). Either way the next command
    # runs in a fresh sandbox and its output is its own.
    if racing["isError"]:
        assert "sandbox was stopped (it sent a result for another command)" in racing["output"]
    else:
        assert racing["output"].startswith("real output"), racing
    assert real["output"].startswith("real output"), real
    assert {"sandbox_spoke", "sandbox_forged"} & set(one_result["codes"])


@pytest.mark.serial  # compares h.fs medians before and after
def test_a_flood_after_a_command_does_not_slow_the_harness(one_result: dict[str, Any]) -> None:
    assert one_result["first"][3]["output"].startswith("armed")
    normal = statistics.median(one_result["before"])
    flooded = statistics.median(one_result["after"])
    print(f"[flood] h.fs.readFile median {normal:.3f} ms before, {flooded:.3f} ms after")
    assert flooded <= max(2 * normal, normal + 0.5), (normal, flooded)


@pytest.mark.serial  # times the command against its deadline
def test_a_flood_during_a_command_ends_it_within_the_deadline(one_result: dict[str, Any]) -> None:
    flood, after = one_result["second"]
    assert flood["isError"] and "sandbox was stopped" in flood["output"], flood
    assert flood["ms"] < TIMEOUT_MS + 250, flood["ms"]
    assert "sandbox_flood" in one_result["codes"]
    assert after["output"].startswith("after the flood"), after
    assert one_result["errors"] == []


# -- requests end with their command and with close() -----------------------------------

MANY = """import js, json, pyharness_net_js
from pyodide.ffi import run_sync, to_js
urls = ["%s/api/slow?n=%%d" %% i for i in range(60)]
pending = [pyharness_net_js.request(json.dumps({"url": u, "method": "GET", "headers": {}, "body": None}))
           for u in urls]
print("started", flush=True)
run_sync(js.Promise.all(to_js(pending)))
"""


@pytest.fixture(scope="module")
def requests_end(browser: Any, api: ApiOrigin) -> Iterator[dict[str, Any]]:
    context, page, errors = open_page(browser, api)
    script = MANY % api.url
    mark = time.monotonic()
    result = call(page, "sandbox_lifetime.cutThenCloseMidRequests", script, f"{api.url}/api/")
    log = api.since(mark)
    rejections = call(page, "sandbox_lifetime.rejections")
    context.close()
    yield {**result, "log": log, "errors": errors, "rejections": rejections}


def test_at_most_six_requests_at_once_and_none_after_close(requests_end: dict[str, Any]) -> None:
    slow = [r for r in requests_end["log"] if r["path"].startswith("/api/slow")]
    # Six started at once; the other 54 were waiting their turn when close() came, and no
    # aborted request is retried: nothing arrived after the first six.
    assert len(slow) == 6, [r["path"] for r in slow]
    # At once: the sixth came before the first was answered (2.5 s), with room for a
    # loaded machine (one after another, the sixth would come 12.5 s after the first).
    spread = max(r["at"] for r in slow) - min(r["at"] for r in slow)
    assert spread < 2.0, spread


def test_a_body_cut_half_way_is_an_error_result(requests_end: dict[str, Any]) -> None:
    [cut] = requests_end["cut"]
    assert cut["isError"] and "broke off" in cut["output"], cut
    # well before the command's 20 s deadline (the time includes the sandbox's boot, which
    # a loaded machine slows: CI once took 5.1 s)
    assert cut["ms"] < 12_000
    assert requests_end["rejections"] == [] and requests_end["errors"] == []


# -- no silent lost update ----------------------------------------------------------------


def test_a_page_write_during_a_command_is_not_lost(browser: Any, api: ApiOrigin) -> None:
    context, page, errors = open_page(browser, api)
    result = call(page, "sandbox_lifetime.pageWriteDuringACommand", TIMEOUT_MS)
    context.close()
    assert result["text"] == "the user's newer text\n"
    assert "notes.txt: kept the workspace's version" in result["ends"][0], result["ends"]
    assert "sandbox_conflict" in result["codes"]
    assert errors == []


# -- a bound on the whole workspace --------------------------------------------------------


def test_a_command_cannot_overfill_the_workspace(browser: Any, api: ApiOrigin) -> None:
    context, page, errors = open_page(browser, api)
    result = call(page, "sandbox_lifetime.overfillTheWorkspace")
    context.close()
    assert "ENOSPC: /work would hold 20,003 files and directories" in result["ends"][0], result
    assert result["names"] == ["keep.txt"]
    assert errors == []
