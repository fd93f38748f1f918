"""The preview (h.preview) in real Chromium, with a model on the scripted provider server
(real OpenAI wire format on loopback): the site it writes is shown the way a static server
would serve it (a style sheet with an @import, an image, an ES module importing another,
data.json fetched at load); a later change reloads it once; its errors (a thrown
exception, a missing import, a 404 image) reach the model's next request through the
preview_errors tool, and the fix clears them. What the site's frame shows is read from
outside, in the frame itself. The page side is e2e/pages/rows/preview.mjs."""

import json
import os
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
    "site/index.html": SITE["site/index.html"].replace(
        '<ul id="rows">', '<img id="gone" src="img/missing.png" alt=""><ul id="rows">'
        '<script>document.getElementById("nope").textContent = "x";</script>'),
    "site/app.mjs": 'import { render } from "./lib.mjs";\nimport "./missing.mjs";\nrender([]);\n',
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
    assert "404 /missing.mjs (from /app.mjs)" in broken
    assert "Uncaught TypeError: Cannot set properties of null" in broken
    assert "0 errors, 0 warnings, 1 log lines" in fixed and "rendered 2 rows" in fixed
    # what the model was sent: the scripted server's requests, the tool results in them
    posts = [json.loads(json.dumps(q.body)) for q in provider.requests if q.method == "POST"]
    told = [m["content"] for m in posts[2]["messages"] if m["role"] == "tool"]
    assert any("404 /img/missing.png" in t for t in told)
    told = [m["content"] for m in posts[4]["messages"] if m["role"] == "tool"]
    assert any("rendered 2 rows" in t for t in told)
