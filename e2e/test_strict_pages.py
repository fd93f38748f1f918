"""The harness on the pages a strict site serves: the bundle on another origin (a CDN with
CORS), a page that enforces Trusted Types, and the boot failures such sites cause (Trusted
Types without pyharness's policy, a CDN without CORS, a CSP without blob: in worker-src, an
isolated page whose worker.mjs has no COEP, an opaque-origin frame), each an EBOOT that
names the fix. Every row serves e2e/pages/strict.html from a server of its own, with the
headers of the case (tooling/serve.py), and records the page's CSP violations and console
errors. The page side is e2e/pages/rows/strict_pages.mjs."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest

from e2e.conftest import BUNDLE, ROOT, call
from tooling.serve import StaticServer

PAGES = ROOT / "e2e" / "pages"
# The Trusted Types line of docs/embedding.md ("Hosting on a strict site"), as written there.
TRUSTED_TYPES = re.search(r"\nContent-Security-Policy: (require-trusted-types-for [^\n]+)\n",
                          (ROOT / "docs" / "embedding.md").read_text()).group(1)


def strict_page(headers: dict[str, str] | None = None, **options: Any) -> StaticServer:
    """A server of strict.html (with these headers) and of the bundle at /pyharness/."""
    return StaticServer({"/": PAGES, "/pyharness/": BUNDLE},
                        headers={"/strict.html": headers or {}}, **options).start()


@pytest.fixture
def servers() -> Iterator[list[StaticServer]]:
    """The row's servers, stopped after it."""
    started: list[StaticServer] = []
    yield started
    for srv in started:
        srv.stop()


def open_page(page: Any, srv: StaticServer, path: str = "/strict.html") -> list[str]:
    """Go to the server's strict.html; the console errors and page errors it gives."""
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("console", lambda m: print(f"[console.{m.type}] {m.text}"))
    page.on("pageerror", lambda e: errors.append(f"pageerror: {e}"))
    page.goto(f"{srv.url}{path}")
    return errors


def assert_widget(r: dict[str, Any], isolated: bool = False) -> None:
    """The widget, from the same bundle, booted and ran a prompt that wrote a file."""
    assert r["widget"]["sent"]["stopReason"] == "stop"
    assert r["widget"]["file"] == "from the widget"
    assert r["widget"]["crossOriginIsolated"] is isolated


def assert_turn(r: dict[str, Any]) -> None:
    """The scripted turn ran both tools and left both files."""
    assert [(e["name"], e["isError"]) for e in r["ends"]] == [("write", False), ("bash", False)]
    assert r["files"] == {"write": "written by write\n", "python": "written by python3 in /work"}
    assert r["done"]["stopReason"] == "stop" and r["done"]["text"] == "both written"
    # the sandbox that replaced the one that ran python3 booted the same way
    assert r["containment"]["sandbox"] == "ready" and r["containment"]["opaqueOrigin"] is True


def test_bundle_on_another_origin_boots_with_the_shell(page, servers):
    # The page on one loopback origin, the bundle on another (a CDN) with
    # Access-Control-Allow-Origin: *. The worker starts from a blob: module of the page's
    # that imports the CDN's worker.mjs: it runs on the page's origin (OPFS is the page's).
    site = strict_page()
    cdn = StaticServer({"/pyharness/": BUNDLE}, cors=True).start()
    servers += [site, cdn]
    errors = open_page(page, site)
    r = call(page, "strict_pages.turnAndWidget", f"{cdn.url}/pyharness/")
    assert_turn(r)
    assert_widget(r)
    assert r["storage"]["kind"] == "opfs"
    assert r["violations"] == [] and errors == []
    # the bundle came from the CDN alone, the runtime and the sandbox's files included
    fetched = {urlsplit(path).path for path in cdn.requests}
    assert {"/pyharness/worker.mjs", "/pyharness/pyodide/pyodide.asm.wasm", "/pyharness/sandbox.mjs"} <= fetched
    assert not [p for p in site.requests if p.startswith("/pyharness/")]


def test_trusted_types_with_the_documented_policy_names(page, servers):
    # Trusted Types enforced, with pyharness's two policies listed: the worker's URL and the
    # sandbox frame's srcdoc (the page's policy), the sandbox worker's data: URL (the frame's).
    site = strict_page({"Content-Security-Policy": TRUSTED_TYPES})
    servers.append(site)
    errors = open_page(page, site)
    r = call(page, "strict_pages.turnAndWidget", "/pyharness/")
    assert_turn(r)
    assert_widget(r)
    assert r["violations"] == [] and errors == []


def boot_failure(page: Any, site: StaticServer, bundle: str, base_url: str | None = None
                 ) -> tuple[dict[str, Any], list[str]]:
    errors = open_page(page, site)
    r = call(page, "strict_pages.bootFailure", bundle, base_url, timeout=30_000)
    assert (r["name"], r["code"], r["step"]) == ("HarnessError", "EBOOT", "worker"), r
    assert r["message"].startswith("pyharness failed to start at step 'worker': ")
    return r, errors


def test_trusted_types_without_pyharness_is_an_eboot_naming_the_policy(page, servers):
    site = strict_page({"Content-Security-Policy":
                        "require-trusted-types-for 'script'; trusted-types other"})
    servers.append(site)
    r, errors = boot_failure(page, site, "/pyharness/")
    assert 'add "pyharness" to the page\'s trusted-types directive' in r["message"]
    assert "trusted-types pyharness)" in r["message"]
    # what the browser reported: the policy pyharness tried to make, then the refused sink
    assert [v["directive"] for v in r["violations"]] == ["trusted-types", "require-trusted-types-for"]
    assert r["violations"][0]["sample"] == "pyharness"
    assert r["violations"][1]["sample"].startswith("Worker constructor|")
    assert len(errors) == 2 and all("Trusted" in e or "trusted-types" in e for e in errors), errors


def test_bundle_on_another_origin_without_cors_is_an_eboot_naming_cors(page, servers):
    # pyharness.mjs from the page's origin, its runtime (baseUrl) on a CDN without CORS.
    site = strict_page()
    cdn = StaticServer({"/pyharness/": BUNDLE}).start()
    servers += [site, cdn]
    r, errors = boot_failure(page, site, "/pyharness/", f"{cdn.url}/pyharness/")
    assert f"the bundle is on another origin ({cdn.url})" in r["message"]
    assert "Access-Control-Allow-Origin" in r["message"]
    assert r["violations"] == []
    # the page's console has the browser's words on pyharness's fetch of worker.mjs (the
    # worker's failed import is in the worker's console)
    assert errors and all("CORS" in e or "Failed to load resource" in e for e in errors), errors


def test_csp_without_blob_in_worker_src_is_an_eboot_naming_it(page, servers):
    # The bundle on a CDN with CORS, but the page's CSP (no worker-src: script-src is its
    # fallback) does not allow the blob: module that starts it.
    cdn = StaticServer({"/pyharness/": BUNDLE}, cors=True).start()
    site = strict_page({"Content-Security-Policy":
                        f"script-src 'self' {cdn.url} 'wasm-unsafe-eval'; connect-src 'self' {cdn.url}"})
    servers += [site, cdn]
    r, errors = boot_failure(page, site, f"{cdn.url}/pyharness/")
    assert f"allow blob: and {cdn.url} in worker-src" in r["message"]
    assert [(v["directive"], v["blocked"]) for v in r["violations"]] == [("worker-src", "blob")]
    assert len(errors) == 1 and "Creating a worker from 'blob:" in errors[0]


def test_isolated_page_whose_worker_has_no_coep_is_an_eboot_naming_coep(page, servers):
    # COOP + COEP require-corp on every response but worker.mjs's.
    site = strict_page(isolate=True, isolate_except=("/worker.mjs",))
    servers.append(site)
    r, errors = boot_failure(page, site, "/pyharness/")
    assert "cross-origin isolated" in r["message"]
    assert "Cross-Origin-Embedder-Policy: require-corp" in r["message"]
    assert "pyharness serve --isolate" in r["message"]
    assert r["violations"] == []
    sent = [h for path, status, h in site.responses if path == "/pyharness/worker.mjs"]
    assert sent and all("cross-origin-embedder-policy" not in h for h in sent)
    assert errors == []  # the browser says nothing of why on the page


def test_opaque_origin_frame_is_an_eboot_naming_allow_same_origin(page, servers):
    # strict.html in an <iframe sandbox="allow-scripts">: an opaque origin, to which the
    # server is another origin (CORS, or the frame could not even import the bundle).
    site = strict_page(cors=True)
    servers.append(site)
    errors = open_page(page, site, "/opaque-frame.html")
    frame = page.locator("iframe").element_handle().content_frame()
    assert frame is not None
    frame.wait_for_load_state()
    assert frame.evaluate("self.origin") == "null"
    r = frame.evaluate("""async (bundle) => {
      const rows = await import(new URL("/rows/strict_pages.mjs", location.href).href);
      return rows.bootFailure(bundle);
    }""", f"{site.url}/pyharness/")
    assert (r["name"], r["code"], r["step"]) == ("HarnessError", "EBOOT", "worker"), r
    assert "opaque origin" in r["message"]
    assert "add allow-same-origin to the frame's sandbox attribute" in r["message"]
    assert r["violations"] == [] and errors == []


def test_a_sandbox_the_pages_csp_refuses_fails_within_5_s_and_says_why(page, servers):
    # The page's CSP (which a srcdoc frame is under too) has no hash for the sandbox
    # frame's inline script: the harness boots, the sandbox is "failed" a second after its
    # frame loaded, with the reason, and a bash call fails at once with it (the next frame
    # too), not after the command's deadline.
    site = strict_page({"Content-Security-Policy": "script-src 'self' 'wasm-unsafe-eval'"})
    servers.append(site)
    open_page(page, site)
    r = call(page, "strict_pages.sandboxRefused", "/pyharness/", timeout=60_000)
    assert r["containment"]["sandbox"] == "failed", r
    assert r["failedMs"] < 5000, r
    assert "its frame loaded without it" in r["containment"]["error"]
    assert "Content-Security-Policy" in r["containment"]["error"]
    assert "FRAME_HASH" in r["containment"]["error"]
    [end] = r["ends"]
    assert end["isError"] and "Content-Security-Policy" in end["output"], end
    assert r["callMs"] < 3000, r
    assert r["done"]["text"] == "after"



@pytest.mark.parametrize("coep", ["require-corp", "credentialless"])
def test_a_cross_origin_isolated_page_runs_the_shell_and_the_widget(page, servers, coep):
    # COOP same-origin with COEP require-corp or credentialless on the page; the bundle
    # served as `pyharness serve --isolate` serves it (COEP and CORP on every file).
    site = strict_page({"Cross-Origin-Opener-Policy": "same-origin",
                        "Cross-Origin-Embedder-Policy": coep},
                       isolate=True, isolate_except=("/strict.html",))
    servers.append(site)
    errors = open_page(page, site)
    r = call(page, "strict_pages.turnAndWidget", "/pyharness/")
    assert r["isolated"] is True
    assert_turn(r)
    assert_widget(r, isolated=True)
    assert r["violations"] == [] and errors == [], (r["violations"], errors)


def test_the_documented_csp_for_the_harness_alone(page, servers):
    # docs/embedding.md's block for a page with the harness only (no widget, no shell),
    # as written there: a turn writes a file, and the page sees no violation, no error.
    text = (ROOT / "docs" / "embedding.md").read_text()
    found = re.search(r"\*\*The harness alone\*\*.*?```\nContent-Security-Policy: (.+?)\n```",
                      text, re.S)
    assert found, "docs/embedding.md has no CSP block for the harness alone"
    site = strict_page({"Content-Security-Policy": found.group(1)})
    servers.append(site)
    errors = open_page(page, site)
    r = call(page, "strict_pages.aloneTurn", "/pyharness/")
    assert r["done"]["stopReason"] == "stop" and r["file"] == "written by write\n"
    assert r["violations"] == [] and errors == [], (r["violations"], errors)


def documented_shell_csp() -> str:
    """docs/embedding.md's CSP for a page with the shell, the bundle's FRAME_HASH in it."""
    text = (ROOT / "docs" / "embedding.md").read_text()
    found = re.search(r"\*\*With the shell\*\*.*?```\nContent-Security-Policy: (.+?)\n```", text, re.S)
    assert found, "docs/embedding.md has no CSP block for a page with the shell"
    frame = (BUNDLE / "sandbox-frame.mjs").read_text()
    digest = re.search(r'FRAME_HASH = "(sha256-[A-Za-z0-9+/=]+)"', frame)
    assert digest, "the bundle's sandbox-frame.mjs exports no FRAME_HASH"
    return found.group(1).replace("FRAME_HASH", digest.group(1))


def test_the_documented_csp_with_the_shell(page, servers):
    # The block of docs/embedding.md, as written there: the turn runs write and python3 in
    # the shell, and the page sees no violation and no console error (the sandbox's eval
    # probe, which the policy refuses, is seen inside the sandbox only: it reaches a
    # report endpoint of the page's policy, not the page's document).
    csp = documented_shell_csp()
    site = strict_page({"Content-Security-Policy": csp})
    servers.append(site)
    errors = open_page(page, site)
    r = call(page, "strict_pages.turnAndWidget", "/pyharness/")
    assert_turn(r)
    assert_widget(r)  # the widget too, under the same policy
    assert r["violations"] == [] and errors == [], (r["violations"], errors)
