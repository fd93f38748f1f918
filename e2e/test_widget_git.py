"""The widget's files panel shows where /work's repository stands (h.git()): nothing
while /work is not a repository; the branch once the agent made one; "● N" with the
files `git status` would list after it changed some, and the branch it switched to; no
axe-core violation. The screenshot is kept in $PYHARNESS_SCREENSHOTS when set."""

import os
from pathlib import Path

from e2e.conftest import axe_violations
from e2e.test_widget import CHAT, mount, send


def bash(command):
    return {"name": "bash", "arguments": {"command": command}}


TURNS = [
    {"text": "Making a repository.", "toolCalls": [bash(
        "git init -q && printf '# Notes\\n' > README.md && mkdir -p src && echo 'print(1)' > src/app.py"
        " && git add -A && git commit -qm 'first' && git log --oneline")]},
    {"text": "Committed on main."},
    {"text": "Starting a branch.", "toolCalls": [bash(
        "git switch -c notes-draft && echo 'More notes.' >> README.md && echo 'todo' > TODO.md"
        " && git status --short")]},
    {"text": "Two files changed on notes-draft."},
]


def test_the_files_panel_shows_the_branch_and_changes(widget, tmp_path):
    mount(widget, {"heading": "Git"}, {"model": {"api": "scripted", "turns": TURNS}, "shell": True})
    chat = widget.locator(CHAT)
    badge = chat.locator(".files-head .git")
    assert badge.is_hidden()  # /work is not a repository yet
    assert send(widget, "Make a repository")["stopReason"] == "stop"
    badge.wait_for(state="visible")
    widget.wait_for_function(
        "() => document.querySelector('pyharness-chat').shadowRoot.querySelector('.files-head .git').textContent === 'main'")
    assert "nothing to commit" in badge.get_attribute("title")
    assert "dirty" not in (badge.get_attribute("class") or "")
    assert send(widget, "Start a branch")["stopReason"] == "stop"
    widget.wait_for_function(
        "() => document.querySelector('pyharness-chat').shadowRoot.querySelector('.files-head .git').textContent === 'notes-draft ● 2'")
    assert badge.get_attribute("title") == "git: on notes-draft, 2 files changed (git status)"
    assert "dirty" in badge.get_attribute("class")
    # The page's own change counts too, and reading the state changed no file.
    widget.evaluate("() => document.querySelector('pyharness-chat').harness.fs.writeFile('src/app.py', 'print(2)\\n')")
    widget.wait_for_function(
        "() => document.querySelector('pyharness-chat').shadowRoot.querySelector('.files-head .git').textContent === 'notes-draft ● 3'")
    assert axe_violations(widget) == []
    out = Path(os.environ.get("PYHARNESS_SCREENSHOTS") or tmp_path)
    out.mkdir(parents=True, exist_ok=True)
    chat.screenshot(path=str(out / "widget-git.png"))
