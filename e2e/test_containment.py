"""Containment in real Chromium: what the model's code can and cannot do.

A hostile model (the scripted provider server, over real HTTP) makes the shell run
``python3 attacks.py NAME`` (e2e/sandbox_attacks.py) for every attack: the network by
every route, the origin's storage, the key and the conversation, the harness itself,
symlink and timer tricks, runaway code. Three servers watch: the page's origin (with a
cookie-protected ``/api``), another origin that logs every request, and the provider.
Each attack is one row: its verdict says it failed **and** no server got a request
during the attacks. Then what must still work, and a page that trusts no forged message.
The page side of the rows is e2e/pages/rows/containment.mjs.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from e2e.conftest import BUNDLE, ROOT, call
from tooling.provider_server import ProviderServer
from tooling.serve import StaticServer

SECRET = "sk-ATTACK-7f3a9c-SECRET"
MARKER = "PROMPT-MARKER-5521"
TIMEOUT_MS = 2000
HERE = Path(__file__).parent

SYNC = ["net_open_url", "net_sync_xhr", "net_sync_xhr_page", "net_beacon",
        "net_import_scripts", "net_eval_import", "net_function_ctor", "net_run_js",
        "net_webrtc", "storage_origin", "storage_cookie", "storage_local_storage",
        "secret_key_gc", "secret_conversation_gc", "secret_system_prompt_gc",
        "secret_key_files", "secret_key_js_globals", "secret_env", "harness_import",
        "harness_in_sys_modules"]
ASYNC = ["net_fetch_page_api", "net_fetch_other", "net_fetch_no_cors", "net_fetch_post",
         "net_fetch_bundle_write_channel", "net_fetch_model_endpoint", "net_pyfetch",
         "net_websocket", "net_eventsource", "net_webtransport", "net_nested_data_worker",
         "net_nested_blob_worker", "net_wasm_streaming", "storage_indexeddb",
         "storage_cache", "storage_cache_keys", "storage_opfs", "storage_service_worker",
         "storage_locks"]
SENT = ["storage_broadcast", "harness_post_to_page"]


class PageOrigin(StaticServer):
    """The page's origin: the test page, the bundle, and an /api that answers only with
    the session cookie (set by /api/login)."""

    def __init__(self) -> None:
        super().__init__({"/": ROOT / "e2e" / "pages", "/pyharness/": BUNDLE})
        static = self.httpd.RequestHandlerClass
        self.cookies: list[tuple[str, str]] = []  # (path, Cookie header) under /data/
        origin = self

        class Handler(static):  # type: ignore[misc, valid-type]
            def do_GET(self) -> None:
                if self.path.startswith("/data/"):
                    return self.data()
                if not self.path.startswith("/api/"):
                    return super().do_GET()
                if self.path == "/api/login":
                    body, status = b"ok", 200
                elif "session=page-cookie-secret" in (self.headers.get("Cookie") or ""):
                    body, status = b"SECRET-DATA-OF-THE-USER", 200
                else:
                    body, status = b"no session", 401
                self.send_response(status)
                if self.path == "/api/login":
                    self.send_header("Set-Cookie", "session=page-cookie-secret; Path=/; SameSite=Lax")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)  # send_response logged the request
                return None

            def data(self) -> None:
                """The API the network option allows: JSON, a redirect, a big body."""
                origin.cookies.append((self.path, self.headers.get("Cookie") or ""))
                if self.path == "/data/redirect":
                    self.send_response(302)
                    self.send_header("Location", "/api/secret")
                    body = b""
                elif self.path == "/data/big":
                    self.send_response(200)
                    body = b"x" * 5000
                else:
                    self.send_response(200)
                    body = b'{"hello": "from the allowed API"}'
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_POST = do_GET

        self.httpd.RequestHandlerClass = Handler


@pytest.fixture(scope="module")
def origins(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    page = PageOrigin().start()
    other = StaticServer({"/": tmp_path_factory.mktemp("other")}).start()
    provider = ProviderServer().start()
    yield {"page": page, "other": other, "provider": provider}
    for server in (page, other, provider):
        server.stop()


def bash(name: str, o: dict[str, Any]) -> list[Any]:
    urls = f"{o['page'].url} {o['other'].url} {o['provider'].url}"
    return ["bash", {"command": f"python3 attacks.py {name} {urls}"}]


def calls_for(o: dict[str, Any]) -> list[list[Any]]:
    return [
        ["write", {"path": "early.txt", "content": "written before the kills\n"}],
        ["write", {"path": "aaa.txt", "content": "a" * 40 + "!\n"}],
        *[bash(n, o) for n in SYNC + ASYNC + SENT],
        bash("harness_forge_result", o),
        bash("fs_symlink_out", o),
        bash("fs_symlink_write_through", o),
        bash("fs_swap_start", o),
        ["bash", {"command": "for i in $(seq 1 60); do mkdir -p d; echo x > d/f$i; done; echo wrote"}],
        bash("fs_swap_stop", o),
        ["bash", {"command": "ln -s /etc/passwd lnk"}],
        ["bash", {"command": "sleep 1"}],  # the asynchronous attempts settle
        bash("report", o),
        *RUNAWAY,
        ["bash", {"command": "python3 -c \"print(open('early.txt').read().strip())\" && echo after > after.txt"}],
    ]


RUNAWAY_COMMANDS = [
    "python3 -c 'sum(range(10**13))'",
    "python3 -c \"import re; re.match(r'(a+)+$', 'a' * 40 + '!')\"",
    "grep -E '(a+)+$' aaa.txt",
]
# After each kill, `true` waits for the fresh sandbox: the next timing is the command's.
RUNAWAY = [["bash", {"command": c}] for c in (RUNAWAY_COMMANDS[0], "true", RUNAWAY_COMMANDS[1],
                                             "true", RUNAWAY_COMMANDS[2])]


@pytest.fixture(scope="module")
def attack(browser: Any, origins: dict[str, Any]) -> dict[str, Any]:
    return run_under_watch(browser, origins, calls_for(origins))


@pytest.fixture(scope="module")
def runaway(browser: Any, origins: dict[str, Any]) -> dict[str, Any]:
    """The runaway commands alone, for the serial row that times them (the whole attack
    run, 12 s alone, would be run again just for them)."""
    early = ["write", {"path": "early.txt", "content": "written before the kills\n"}]
    aaa = ["write", {"path": "aaa.txt", "content": "a" * 40 + "!\n"}]
    return run_under_watch(browser, origins, [early, aaa, *RUNAWAY])


def run_under_watch(browser: Any, o: dict[str, Any], calls: list[list[Any]]) -> dict[str, Any]:
    """One prompt whose tool calls are `calls`, in a harness booted under watch (every
    message to a worker recorded, the servers' logs noted before and after), in a context
    of its own; each call's tool_end and timing by its command (or path, or attack name)."""
    o["provider"].script([{"toolCalls": calls}, {"text": "attacks done"}, {"text": "still here"}])
    context = browser.new_context()
    page = context.new_page()
    page.on("console", lambda m: print(f"[console.{m.type}] {m.text}"))
    page.goto(f"{o['page'].url}/index.html")
    page.wait_for_function("window.pyharness !== undefined")
    source = (HERE / "sandbox_attacks.py").read_text()
    source = source.replace("@SECRET@", SECRET[::-1]).replace("@MARKER@", MARKER[::-1])
    model = {"api": "openai-chat", "baseUrl": o["provider"].base_url, "model": "m",
             "apiKey": SECRET}
    setup = call(page, "containment.bootUnderWatch", model, TIMEOUT_MS)
    seen = {name: len(s.requests) for name, s in o.items()}
    result = call(page, "containment.runTheAttacks", source, MARKER)
    time.sleep(0.5)  # anything still in flight reaches the logs
    during = {name: s.requests[seen[name]:] for name, s in o.items()}
    to_worker = call(page, "containment.toWorker")
    call(page, "containment.closeHarness")
    frames = page.evaluate("document.querySelectorAll('iframe').length")
    context.close()
    outputs = {}
    for tool_call, end in zip(calls, result["ends"], strict=True):
        key = tool_call[1].get("command", tool_call[1].get("path", ""))
        name = key.split()[2] if key.startswith("python3 attacks.py") else key
        outputs[name] = end
        print(f"[attack] {name}: {end['output'][:300]!r}")  # shown when a row fails
    report = dict(line.split(": ", 1) for line in outputs.get("report", {}).get("output", "")
                  .splitlines() if ": " in line)
    return {**result, "setup": setup, "outputs": outputs, "report": report, "during": during,
           "to_worker": to_worker, "frames": frames, "calls": calls}


def no_request_reached_a_server(attack: dict[str, Any]) -> None:
    during = attack["during"]
    assert during["page"] == [] and during["other"] == []
    provider = [r for r in during["provider"] if not (  # the page's own model requests
        r.method in ("POST", "OPTIONS") and r.path == "/v1/chat/completions")]
    assert provider == []


@pytest.mark.parametrize("name", SYNC)
def test_refused_at_once(attack: dict[str, Any], name: str) -> None:
    output = attack["outputs"][name]["output"]
    assert output.startswith("BLOCKED"), output
    no_request_reached_a_server(attack)


@pytest.mark.parametrize("name", ASYNC)
def test_asynchronous_attempt_fails(attack: dict[str, Any], name: str) -> None:
    assert attack["outputs"][name]["output"] in ("STARTED", ) or \
        attack["outputs"][name]["output"].startswith("BLOCKED"), attack["outputs"][name]
    outcome = attack["report"].get(name, attack["outputs"][name]["output"])
    assert outcome.startswith("BLOCKED"), outcome
    no_request_reached_a_server(attack)


def test_origin_channels_hear_nothing(attack: dict[str, Any]) -> None:
    # A BroadcastChannel of the page's origin and the page itself (through the frame).
    assert attack["outputs"]["storage_broadcast"]["output"] == "SENT"
    assert attack["outputs"]["harness_post_to_page"]["output"] == "SENT"
    assert attack["heard"] == []
    assert attack["diagnostics"] == []  # nothing reached the page to be dropped either


def test_a_forged_result_outside_the_workspace_is_refused_whole(attack: dict[str, Any]) -> None:
    end = attack["outputs"]["harness_forge_result"]
    assert end["output"].startswith("ARMED") and "none of the command's changes" in end["output"]
    assert not any(f.startswith("fine:") for f in attack["files"])


def test_symlinks_made_by_code_never_reach_the_workspace(attack: dict[str, Any]) -> None:
    for name in ("fs_symlink_out", "fs_symlink_write_through"):
        assert "not copied back (symlinks" in attack["outputs"][name]["output"]
    ln = attack["outputs"]["ln -s /etc/passwd lnk"]
    assert ln["isError"] and "permission denied" in ln["output"].lower()
    names = [f.split(":")[0] for f in attack["files"]]
    assert "evil-link" not in names and "sp" not in names and "lnk" not in names
    assert all(not f.endswith(":symlink") for f in attack["files"])


def test_a_timer_swapping_a_directory_for_a_symlink_gets_nowhere(attack: dict[str, Any]) -> None:
    assert attack["outputs"]["fs_swap_start"]["output"] == "ARMED"
    assert attack["outputs"]["fs_swap_stop"]["output"] == "STOPPED"
    d = attack["d"]
    if d["ok"]:  # whatever the race left in d is plain files inside /work
        assert all(e["type"] == "file" for e in d["value"])
    assert all(not f.endswith(":symlink") for f in attack["files"])


@pytest.mark.serial  # times each stop against the deadline
@pytest.mark.parametrize("command", RUNAWAY_COMMANDS)
def test_runaway_code_is_stopped_within_the_timeout(runaway: dict[str, Any], command: str) -> None:
    end = runaway["outputs"][command]
    assert end["ms"] < TIMEOUT_MS + 500, end["ms"]
    if command.startswith("grep"):  # just-bash's grep does not backtrack: it just ends
        assert end["output"] == "[exit 1]"
        return
    assert end["isError"] and "[exit 124]" in end["output"]
    assert "sandbox was stopped and restarted" in end["output"]


def test_after_the_kills_everything_still_works(attack: dict[str, Any]) -> None:
    last = attack["outputs"][attack["calls"][-1][1]["command"]]
    assert last == {**last, "output": "written before the kills", "isError": False}
    assert attack["early"] == "written before the kills\n"
    assert attack["after"] == {"ok": True, "value": "after\n"}
    assert attack["done"]["text"] == "attacks done"
    assert attack["next"]["text"] == "still here" and attack["next"]["stopReason"] == "stop"


def test_the_key_stays_on_the_page(attack: dict[str, Any]) -> None:
    # The worker never got it, in any message; the provider did, added by the page.
    assert not any(SECRET in m for m in attack["to_worker"])
    posts = [r for r in attack["during"]["provider"] if r.method == "POST"]  # this run's
    assert len(posts) == 3
    assert all(r.headers.get("authorization") == f"Bearer {SECRET}" for r in posts)


def test_containment_is_reported_as_measured(attack: dict[str, Any]) -> None:
    c = attack["setup"]["containment"]
    assert c["sandbox"] == "ready" and c["opaqueOrigin"] and c["networkBlocked"]
    assert c["storageBlocked"] and c["evalBlocked"] and c["secretsOnPage"]
    assert c["workerCsp"]  # the test server sends worker.mjs's own CSP, as `pyharness serve` does
    assert attack["setup"]["api"] == "SECRET-DATA-OF-THE-USER"  # the page's own session works
    assert attack["frames"] == 0  # close() removed the sandbox


def test_python3_still_reads_and_writes_the_workspace(attack: dict[str, Any]) -> None:
    assert "after.txt:file" in attack["files"] and "early.txt:file" in attack["files"]
    assert attack["outputs"]["for i in $(seq 1 60); do mkdir -p d; echo x > d/f$i; done; echo wrote"]


# -- the page trusts no message it did not expect ------------------------------------


@pytest.fixture(scope="module")
def forged(browser: Any, origins: dict[str, Any]) -> Iterator[dict[str, Any]]:
    o = origins
    context = browser.new_context()
    page = context.new_page()
    page.goto(f"{o['page'].url}/index.html")
    page.wait_for_function("window.pyharness !== undefined")
    before = len(o["other"].requests)
    result = call(page, "containment.forgeWorkerMessages", o["other"].url)
    time.sleep(0.3)
    result["other_requests"] = o["other"].requests[before:]
    context.close()
    yield result


def test_a_reply_nobody_asked_for_is_dropped(forged: dict[str, Any]) -> None:
    assert "unexpected_reply" in forged["codes"]


def test_a_second_ready_and_late_boot_messages_change_nothing(forged: dict[str, Any]) -> None:
    assert {"unexpected_ready", "unexpected_progress", "unexpected_boot_error"} <= set(forged["codes"])
    assert forged["sameTools"] and forged["versions"]["pyharness"] != "evil"
    assert forged["still"] == "works"  # a forged boot_error did not break the harness


def test_forged_run_events_are_dropped(forged: dict[str, Any]) -> None:
    assert forged["codes"].count("unexpected_event") >= 2
    assert forged["done"]["text"] == "slow" and forged["done"]["stopReason"] == "stop"


def test_tool_calls_outside_a_run_or_for_unknown_tools_are_refused(forged: dict[str, Any]) -> None:
    assert forged["codes"].count("unexpected_toolcall") == 2
    assert forged["toolRuns"] == []
    refused = [m for m in forged["replies"] if m["type"] == "toolres"]
    assert [m["id"] for m in refused][:2] == [501, 502] and not any(m["ok"] for m in refused)


def test_page_tool_input_is_checked_against_its_schema_on_the_page(forged: dict[str, Any]) -> None:
    assert "invalid_tool_input" in forged["codes"] and forged["toolRuns"] == []
    refused = {m["id"]: m for m in forged["replies"] if m["type"] == "toolres"}
    assert "does not match the tool's schema" in refused[503]["output"]
    assert "/n" in refused[503]["output"]


def test_a_request_to_anything_but_the_model_is_refused(forged: dict[str, Any]) -> None:
    assert "refused_fetch" in forged["codes"]
    assert [m["id"] for m in forged["replies"] if m["type"] == "fetch_error"] == [77]
    assert forged["other_requests"] == []


def test_unknown_and_malformed_messages_are_dropped(forged: dict[str, Any]) -> None:
    assert {"unknown_type", "malformed"} <= set(forged["codes"])


def test_close_terminates_every_worker_whatever_happened(forged: dict[str, Any]) -> None:
    assert forged["terminated"] == ["worker"] and forged["frames"] == 0
    assert forged["afterClose"]["code"] == "ECANCELED"


# -- the network the page allows, and nothing more ----------------------------------

NET_CALLS = [
    "curl -sS {page}/data/hello.json",
    "python3 -c \"import pyharness_net as n; r = n.fetch('{page}/data/hello.json'); "
    "print(r.status, r.json()['hello'])\"",
    "curl -sS {page}/api/secret",
    "curl -sS -X POST -d x {page}/data/post",
    "curl -sS {page}/data/redirect",
    "curl -sS {page}/data/big",
    "curl -sS {page}/data/..%2fapi/secret",
    "python3 -c \"import pyharness_net as n; n.fetch('{other}/data/x')\"",
    "python3 -c \"import js; print(js.fetch)\" && curl -sS {other}/data/y",
]


@pytest.fixture(scope="module")
def network(browser: Any, origins: dict[str, Any]) -> Iterator[dict[str, Any]]:
    o = origins
    commands = [c.format(page=o["page"].url, other=o["other"].url) for c in NET_CALLS]
    turns = [{"toolCalls": [{"name": "bash", "arguments": {"command": c}} for c in commands]},
             {"text": "done"}]
    context = browser.new_context()
    page = context.new_page()
    page.goto(f"{o['page'].url}/index.html")
    page.wait_for_function("window.pyharness !== undefined")
    before = {name: len(s.requests) for name, s in o.items()}
    cookies_before = len(o["page"].cookies)
    result = call(page, "containment.useTheNetwork", turns, f"{o['page'].url}/data/")
    context.close()
    outputs = {c: (e["output"], e["isError"]) for c, e in zip(NET_CALLS, result["ends"], strict=True)}
    for c, out in outputs.items():
        print(f"[network] {c}: {out!r}")
    yield {"outputs": outputs, "tool": result["tool"],
           "page_requests": [r for r in o["page"].requests[before["page"]:]
                             if r.startswith(("/api/", "/data/"))],
           "other_requests": o["other"].requests[before["other"]:],
           "cookies": o["page"].cookies[cookies_before:]}


def test_allowed_requests_work_from_curl_and_python(network: dict[str, Any]) -> None:
    assert network["outputs"][NET_CALLS[0]] == ('{"hello": "from the allowed API"}', False)
    assert network["outputs"][NET_CALLS[1]] == ("200 from the allowed API", False)
    assert "/data/" in network["tool"] and "pyharness_net" in network["tool"]


@pytest.mark.parametrize("call, reason", [
    (NET_CALLS[2], "is not in the allowed network"),
    (NET_CALLS[3], "the method POST is not allowed"),
    (NET_CALLS[4], "redirects are not followed"),
    (NET_CALLS[5], "larger than 2048 bytes"),
    (NET_CALLS[6], "encoded separators"),
    (NET_CALLS[7], "is not in the allowed network"),
    (NET_CALLS[8], "is not in the allowed network"),
])
def test_everything_else_is_refused_with_a_reason(network: dict[str, Any], call: str,
                                                  reason: str) -> None:
    output, is_error = network["outputs"][call]
    assert is_error and reason in output, output


def test_only_allowed_requests_left_and_without_cookies(network: dict[str, Any]) -> None:
    # The redirect's target (/api/secret) was never requested: redirects are errors.
    assert network["page_requests"] == ["/api/login", "/data/hello.json", "/data/hello.json",
                                        "/data/redirect", "/data/big"]
    assert network["other_requests"] == []
    assert [c for _, c in network["cookies"]] == ["", "", "", ""]
