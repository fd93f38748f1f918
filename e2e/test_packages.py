"""Python packages for the model's code, in real Chromium: `pip` in the sandbox installs
from the bundle's own package index (built with `--package tabulate==0.10.0`, see the
Makefile) offline, what it installed comes back in the next sandbox (after a hard stop
too), a package nowhere to be had is a clear error, and an index on another origin is
used only when the page allows it, through the page, without cookies."""

from __future__ import annotations

import hashlib
import io
import json
import threading
import zipfile
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from e2e.conftest import call

GREETING = "greeting-1.0.0-py3-none-any.whl"


def greeting_wheel() -> bytes:
    """A small pure-Python wheel that only the test index has."""
    files = {
        "greeting/__init__.py": 'def hello():\n    return "hello from the allowed index"\n',
        "greeting-1.0.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: greeting\nVersion: 1.0.0\n",
        "greeting-1.0.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                                          "Tag: py3-none-any\n",
        "greeting-1.0.0.dist-info/top_level.txt": "greeting\n",
    }
    record = "".join(f"{name},,\n" for name in files) + "greeting-1.0.0.dist-info/RECORD,,\n"
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as whl:
        for name, text in {**files, "greeting-1.0.0.dist-info/RECORD": record}.items():
            whl.writestr(name, text)
    return out.getvalue()


class IndexServer:
    """A PEP 691 (JSON simple API) package index on its own loopback port, with CORS
    headers, that logs each request's path and its Cookie and Origin headers."""

    def __init__(self) -> None:
        self.wheel = greeting_wheel()
        self.seen: list[dict[str, str]] = []
        index = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                index.seen.append({"path": self.path, "cookie": self.headers.get("Cookie") or "",
                                   "origin": self.headers.get("Origin") or ""})
                if self.path == "/simple/greeting/":
                    body = json.dumps({"meta": {"api-version": "1.0"}, "name": "greeting", "files": [{
                        "filename": GREETING, "url": f"{index.url}/files/{GREETING}",
                        "hashes": {"sha256": hashlib.sha256(index.wheel).hexdigest()}}]}).encode()
                    kind = "application/vnd.pypi.simple.v1+json"
                elif self.path == f"/files/{GREETING}":
                    body, kind = index.wheel, "application/octet-stream"
                else:
                    self.send_response(404)
                    self.send_header("Access-Control-Allow-Origin", "*")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Access-Control-Allow-Origin", "*")
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_OPTIONS(self) -> None:  # a CORS preflight, should the browser send one
                self.send_response(204)
                self.send_header("Access-Control-Allow-Origin", "*")
                self.send_header("Access-Control-Allow-Headers", "*")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True).start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="module")
def index() -> Iterator[IndexServer]:
    server = IndexServer()
    yield server
    server.stop()


def bash(command: str) -> dict[str, Any]:
    return {"name": "bash", "arguments": {"command": command}}


TABLE = "from tabulate import tabulate\nprint(tabulate([['a', 1], ['b', 22]], headers=['k', 'v']))\n"
SLEEP = "python3 -c 'import time; time.sleep(30)'"


def prompts_offline(index_url: str) -> list[list[dict[str, Any]]]:
    first = [bash("python3 -c 'import tabulate'"), bash("pip install tabulate"),
             bash(f"cat > table.py <<'EOF'\n{TABLE}EOF\npython3 table.py"), bash("pip list"),
             bash("pip install nosuchpackage"), bash(f"pip install {index_url}/files/{GREETING}"),
             bash("pip install greeting"), bash(SLEEP)]
    second = [bash("python3 table.py"), bash("python3 -m pip show tabulate"),
              bash("python3 -c \"import micropip\nawait micropip.install('tabulate')\nprint('ok')\""),
              bash("pip uninstall -y tabulate")]
    third = [bash("python3 -c 'import tabulate'")]
    # The first run is cancelled during its last command: its closing text is never asked for.
    return [[{"toolCalls": first}], [{"toolCalls": second}, {"text": "two"}],
            [{"toolCalls": third}, {"text": "three"}]]


def pip_runs(browser: Any, server: Any, index: IndexServer, *args: Any) -> dict[str, Any]:
    """packages.pipRuns(*args) on a page of its own, and what the index saw meanwhile."""
    context = browser.new_context()
    page = context.new_page()
    page.on("console", lambda m: print(f"[console.{m.type}] {m.text}"))
    page.goto(f"{server.url}/index.html")
    page.wait_for_function("window.pyharness !== undefined")
    before = len(index.seen)
    result = call(page, "packages.pipRuns", *args, timeout=200_000)
    context.close()
    for i, run in enumerate(result["runs"]):
        for end in run["ends"]:
            print(f"[run {i}] {end}")
    return {**result, "index_saw": index.seen[before:]}


@pytest.fixture(scope="module")
def offline(browser: Any, server: Any, index: IndexServer) -> dict[str, Any]:
    return pip_runs(browser, server, index, prompts_offline(index.url), {}, SLEEP)


@pytest.mark.timeout(300)
def test_pip_installs_from_the_bundle_offline(offline: dict[str, Any]) -> None:
    ends = offline["runs"][0]["ends"]
    assert ends[0]["isError"] and "ModuleNotFoundError: No module named 'tabulate'" in ends[0]["output"]
    assert not ends[1]["isError"] and "Successfully installed tabulate-0.10.0" in ends[1]["output"]
    assert not ends[2]["isError"]
    assert ends[2]["output"].splitlines() == ["k      v", "---  ---", "a      1", "b     22"]
    listed = ends[3]["output"].splitlines()
    assert listed[0].split() == ["Package", "Version"] and ["tabulate", "0.10.0"] in [r.split() for r in listed]


@pytest.mark.timeout(300)
def test_what_is_not_in_the_index_is_a_clear_error(offline: dict[str, Any]) -> None:
    ends = offline["runs"][0]["ends"]
    missing = ends[4]
    assert missing["isError"] and "No matching distribution found for nosuchpackage" in missing["output"]
    assert "allows no other index" in missing["output"] and "tabulate 0.10.0" in missing["output"]
    by_url, by_name = ends[5], ends[6]
    assert by_url["isError"] and "this page allows the model's code no network" in by_url["output"]
    assert "Traceback" not in by_url["output"] + missing["output"]  # one message, not micropip's log
    assert by_name["isError"] and "No matching distribution found for greeting" in by_name["output"]
    # Without the permission the index heard nothing, though the model named it.
    assert offline["index_saw"] == []


@pytest.mark.timeout(300)
def test_installed_packages_come_back_in_the_next_sandbox(offline: dict[str, Any]) -> None:
    first, second, third = offline["runs"]
    assert first["done"]["stopReason"] == "aborted"  # the sleep's sandbox was torn down
    table, show, again, removed = second["ends"]
    assert not table["isError"] and table["output"].splitlines()[2] == "a      1"
    assert not show["isError"] and "Name: tabulate\nVersion: 0.10.0" in show["output"]
    assert (again["output"], again["isError"]) == ("ok", False)  # top-level await, micropip
    assert not removed["isError"] and "Successfully uninstalled tabulate-0.10.0" in removed["output"]
    # Uninstalled stays uninstalled in the next sandbox.
    assert third["ends"][0]["isError"] and "No module named 'tabulate'" in third["ends"][0]["output"]


@pytest.fixture(scope="module")
def allowed(browser: Any, server: Any, index: IndexServer) -> dict[str, Any]:
    turns = [bash("pip install greeting"),
             bash("python3 -c 'import greeting; print(greeting.hello())'"),
             bash("python3 -c \"import pyharness_net as n; "
                  f"n.fetch('{index.url}/simple/greeting/', method='POST')\""),
             # The index's origin is the only new destination: the page's own origin,
             # by the sandbox's fetch, stays refused.
             bash("python3 -c \"import pyodide.http as h\n"
                  f"await h.pyfetch('{server.url}/index.html')\"")]
    options = {"packages": {"indexUrls": [f"{index.url}/simple"]}}
    result = pip_runs(browser, server, index, [[{"toolCalls": turns}, {"text": "done"}]], options)
    return {**result, "page_origin": server.url, "index": f"{index.url}/simple"}


@pytest.mark.timeout(300)
def test_an_allowed_index_is_used_through_the_page(allowed: dict[str, Any]) -> None:
    install, use, post, page = allowed["runs"][0]["ends"]
    assert page["isError"] and "is not in the allowed network" in page["output"]
    assert not install["isError"] and "Successfully installed greeting-1.0.0" in install["output"]
    assert (use["output"], use["isError"]) == ("hello from the allowed index", False)
    # Read only: the index's origin takes no other method.
    assert post["isError"] and "the method POST is not allowed" in post["output"]
    saw = allowed["index_saw"]
    assert [s["path"] for s in saw] == ["/simple/greeting/", f"/files/{GREETING}"]
    assert all(s["cookie"] == "" for s in saw)  # the page's cookie stayed home
    # The requests came from the page (its origin), not from the sandbox's opaque origin.
    assert all(s["origin"] == allowed["page_origin"] for s in saw)
    assert allowed["containment"]["agentNetwork"] == [allowed["index"]]


@pytest.mark.timeout(300)
def test_installed_packages_come_back_after_a_reload(app: Any) -> None:
    call(app, "persistence.deleteAllWorkspaces")
    install = [{"toolCalls": [bash("pip install tabulate")]}, {"text": "installed"}]
    first = call(app, "packages.pipOnWorkspace", "packages", install)
    assert first["storage"]["kind"] == "opfs"
    assert "Successfully installed tabulate-0.10.0" in first["ends"][0]["output"]
    app.reload()
    app.wait_for_function("window.pyharness !== undefined")
    use = [{"toolCalls": [bash("python3 -c 'import tabulate; print(tabulate.__version__)'")]},
           {"text": "used"}]
    second = call(app, "packages.pipOnWorkspace", "packages", use)
    assert second["ends"][0] == {"output": "0.10.0", "isError": False}
    app.reload()  # closes the harness: its workspace can go
    app.wait_for_function("window.pyharness !== undefined")
    call(app, "persistence.deleteAllWorkspaces")


@pytest.mark.serial  # a short deadline: alone, not beside another browser
@pytest.mark.timeout(300)
def test_installing_again_is_not_the_commands_time(app: Any) -> None:
    """A fresh sandbox installs again what earlier ones had before the command's own
    deadline starts: with a deadline far shorter than that install, every command of the
    next run still runs, `pip uninstall` included (it once timed out, for good)."""
    call(app, "persistence.deleteAllWorkspaces")
    install = [{"toolCalls": [bash("pip install tabulate")]}, {"text": "installed"}]
    first = call(app, "packages.pipOnWorkspace", "restore", install)
    assert "Successfully installed tabulate-0.10.0" in first["ends"][0]["output"]
    app.reload()
    app.wait_for_function("window.pyharness !== undefined")
    commands = ["echo hi", "python3 -c 'import tabulate; print(tabulate.__version__)'",
                "pip uninstall -y tabulate", "pip list"]
    turns = [{"toolCalls": [bash(c)]} for c in commands] + [{"text": "done"}]
    # 1 s: each command fits in it alone; installing tabulate again (micropip included,
    # about 1.7 s here) would not, were it counted
    second = call(app, "packages.pipOnWorkspace", "restore", turns, 1000)
    ends = second["ends"]
    assert ends[0] == {"output": "hi", "isError": False}, ends
    assert ends[1] == {"output": "0.10.0", "isError": False}, ends
    assert "Successfully uninstalled tabulate" in ends[2]["output"], ends
    assert not ends[3]["isError"] and "tabulate" not in ends[3]["output"], ends
    app.reload()
    app.wait_for_function("window.pyharness !== undefined")
    call(app, "persistence.deleteAllWorkspaces")
