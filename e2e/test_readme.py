"""The README's embedding example, copied as it is into a page, really works."""

import re
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_readme_snippet_works_when_copied(page, server, tmp_path):
    readme = (ROOT / "README.md").read_text()
    snippet = re.search(r"```html\n(.*?)```", readme, re.S).group(1)
    (tmp_path / "index.html").write_text(snippet)
    server.add_mount("/readme/", tmp_path)
    messages = []  # every console message, in the page's order
    page.on("console", lambda m: messages.append(m))
    page.goto(f"{server.url}/readme/")

    def read_log():
        # The arguments of every console.log call, as JSON values, read after the fact: a
        # json_value() inside the handler is a round trip to the page, during which
        # Playwright may dispatch the next message, so a log made there is out of order.
        return [[a.json_value() for a in m.args] for m in messages]

    deadline = time.monotonic() + 60
    while not any(m.text == "hi\n" for m in messages) and time.monotonic() < deadline:
        page.wait_for_timeout(200)
    logged = read_log()
    assert ["hi\n"] in logged, logged
    done = [args[0] for args in logged if len(args) == 1 and isinstance(args[0], dict)]
    assert len(done) == 1 and done[0]["text"] == "Done." and done[0]["stopReason"] == "stop"
    assert done[0]["usage"]["requests"] == 2 and done[0]["usage"]["toolCalls"] == 1
    types = [args[0] for args in logged if len(args) == 2]
    assert types[0] == "run_start" and types[-1] == "run_end" and "tool_end" in types
    assert ["boot", "harness", "done"] in logged
