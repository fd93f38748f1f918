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
    logged = []  # the arguments of every console.log call, as JSON values
    page.on("console", lambda m: logged.append([a.json_value() for a in m.args]))
    page.goto(f"{server.url}/readme/")
    deadline = time.monotonic() + 60
    while ["hi\n"] not in logged and time.monotonic() < deadline:
        page.wait_for_timeout(200)
    assert ["hi\n"] in logged, logged
    assert [{"text": "Done.", "stopReason": "stop"}] in logged
    types = [args[0] for args in logged if len(args) == 2]
    assert types[0] == "run_start" and types[-1] == "run_end" and "tool_end" in types
    assert ["boot", "harness", "done"] in logged
