"""git in the shell, in real Chromium: the agent's git (shell/git/, isomorphic-git in the
sandbox) over /work, a repository the host's own git accepts (`git fsck --strict`) and
reads the same, the page's author, hooks that never run, a commit undone by h.revert.
The page side is e2e/pages/rows/git.mjs."""

import base64
import io
import subprocess
import zipfile
from pathlib import Path

from e2e.conftest import call


def _unzip(data: str, into: Path) -> Path:
    with zipfile.ZipFile(io.BytesIO(base64.b64decode(data))) as z:
        z.extractall(into)
    return into


def _git(repo: Path, *args: str) -> str:
    env = {"GIT_CONFIG_NOSYSTEM": "1", "HOME": str(repo.parent), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True)
    return done.stdout


def test_git_in_the_shell_makes_a_repository_real_git_reads(app, tmp_path):
    r = call(app, "git.gitInTheShell")
    first = [o["output"] for o in r["first"]]
    assert not any(o["isError"] for o in r["first"]), first
    assert "[main (root-commit)" in first[0] and "first commit" in first[0]
    assert "create mode 100644 src/b.py" in first[0]
    assert first[1] == "(no output)"  # .git is never a path git tracks
    assert "Switched to a new branch 'feature'" in first[2] and "Merge made by the 'ort' strategy." in first[2]
    assert "Saved working directory and index state WIP on main" in first[3]
    assert "stash@{0}: WIP on main" in first[3]
    assert first[4] == "Configured Name <configured@example.com>"
    assert "(HEAD -> main" in first[5] and "tag: v2" in first[5] and "feature" in first[5]
    assert ".git" in first[5].split()
    assert not r["hook"]  # hooks never run

    # The host's git reads the workspace the agent left: fsck, and the same history.
    repo = _unzip(r["zipBefore"], tmp_path / "before")
    subprocess.run(["git", "fsck", "--strict"], cwd=repo, check=True, capture_output=True)
    log = _git(repo, "log", "--all", "--format=%an <%ae>|%s")
    assert "Page Author <page@example.com>|first commit" in log
    assert "Configured Name <configured@example.com>|third" in log
    assert "Configured Name <configured@example.com>|in a later run" in log
    assert _git(repo, "stash", "list").startswith("stash@{0}: WIP on main")
    assert _git(repo, "tag").split() == ["v1", "v2"]
    graph = _git(repo, "log", "--graph", "--oneline", "main")
    assert "merge feature" in graph and "|\\" in graph
    assert _git(repo, "status", "--porcelain") == ""
    assert r["second"][0]["output"].splitlines()[0].endswith("in a later run")

    # The run that made a commit is reverted: the commit is gone, exactly.
    assert r["reverted"] > 0
    third = r["third"][0]
    assert third["isError"]
    assert third["output"].splitlines()[0].endswith(" third")
    assert "git: 'rebase' is not supported here" in third["output"]
    after = _unzip(r["zip"], tmp_path / "after")
    subprocess.run(["git", "fsck", "--strict"], cwd=after, check=True, capture_output=True)
    assert "in a later run" not in _git(after, "log", "--all", "--format=%s")
    assert _git(after, "status", "--porcelain") == ""
