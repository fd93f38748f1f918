"""git in the shell, in real Chromium: the agent's git (shell/git/, isomorphic-git in the
sandbox) over /work, a repository the host's own git accepts (`git fsck --strict`) and
reads the same, the page's author, hooks that never run, a commit undone by h.revert;
remotes through the page against the host's `git http-backend` (e2e/git_server.py),
with the page's credentials. The page side is e2e/pages/rows/git.mjs."""

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
    log, status, stat, refused = r["third"]
    assert any(line.endswith("(HEAD -> main) third") for line in log["output"].splitlines())
    assert refused["isError"] and "git: 'log --graph' is not supported here" in refused["output"]
    assert "git: 'rebase' is not supported here" in refused["output"]
    after = _unzip(r["zip"], tmp_path / "after")
    subprocess.run(["git", "fsck", "--strict"], cwd=after, check=True, capture_output=True)
    assert "in a later run" not in _git(after, "log", "--all", "--format=%s")
    assert _git(after, "status", "--porcelain") == ""
    # What the agent's git printed is what the host's git prints of the same repository.
    assert log["output"] == _git(after, "log", "--oneline", "--all", "--decorate").rstrip("\n")
    assert status["output"] == _git(after, "status").rstrip("\n")
    assert stat["output"] == _git(after, "diff", "HEAD~2", "--stat").rstrip("\n")


def test_remotes_through_the_page_with_the_pages_credentials(app, tmp_path):
    import base64 as b64

    from e2e.git_server import GitServer, bare_repository

    bare = bare_repository(tmp_path, "project")
    password = "s3cret-Token-4f9a"
    server = GitServer(tmp_path, "agent", password).start()
    try:
        r = call(app, "git.remotes", server.url, password)
    finally:
        server.stop()
    clone, push, forged, fetch = r["outputs"]
    assert not clone["isError"], clone
    assert "add the app" in clone["output"] and "remotes/origin/topic" in clone["output"]
    assert not push["isError"], push
    assert "* [new branch]      agent-work -> agent-work" in push["output"]
    # The page's rule asked once, for the line with the push in it.
    assert len(r["approvals"]) == 1 and r["approvals"][0]["tool"] == "bash"
    assert r["approvals"][0]["subject"].endswith("git push -u origin agent-work")
    # A push made by python3 itself is refused in the worker: no rule allowed it.
    assert forged["isError"] and "made only by a `git push` command" in forged["output"]
    assert not fetch["isError"] and "## agent-work...origin/agent-work" in fetch["output"]
    # The host's bare repository has the agent's branch, by the page's author.
    env = {"PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(tmp_path)}
    log = subprocess.run(["git", "log", "--format=%an <%ae>|%s", "agent-work"], cwd=bare,
                         env=env, capture_output=True, text=True, check=True).stdout
    assert log.splitlines()[0] == "Page Author <page@example.com>|agent change"
    subprocess.run(["git", "fsck", "--strict"], cwd=bare, env=env, check=True, capture_output=True)
    # Every request reached the server with the page's credentials (so none came from the
    # harness without the network, which has no git.auth); the forged push did not.
    want = "Basic " + b64.b64encode(f"agent:{password}".encode()).decode()
    assert server.log and all(entry.authorization == want for entry in server.log)
    pushes = [e for e in server.log if e.method == "POST" and e.path.endswith("git-receive-pack")]
    assert len(pushes) == 1
    assert r["asked"] and all(url.startswith(server.url) for url in r["asked"])
    # The credentials never crossed to the worker, nor into what the model saw.
    secret = b64.b64encode(f"agent:{password}".encode()).decode()
    assert not [m for m in r["sent"] if password in m or secret in m]
    assert not [o for o in r["outputs"] if password in o["output"] or secret in o["output"]]
    # Without the remote allowed, nothing is requested and the error says how to allow it.
    refused = r["refused"]
    assert refused["isError"] and "allow the remote's URL with createHarness({network:" in refused["output"]


READ_COMMANDS = [
    "git log --oneline --all --decorate",
    "git log --format='%H %P %an <%ae> %s' --all",
    "git status",
    "git status --short --branch",
    "git diff",
    "git diff --cached",
    "git diff HEAD~1 --stat",
    "git show v2 --stat",
    "git branch -v",
    "git tag",
    "git stash list",
]


def test_a_repository_the_host_made_reads_the_same_in_the_sandbox(app, tmp_path):
    """Several branches, a merge, packed refs and a packfile (`git gc`), an annotated tag,
    a stash, a staged and an unstaged change: imported with importZip, the sandbox's git
    prints what the host's git prints."""
    repo = tmp_path / "repo"
    repo.mkdir()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1", "TZ": "UTC",
           "GIT_AUTHOR_NAME": "Host", "GIT_AUTHOR_EMAIL": "host@example.com",
           "GIT_COMMITTER_NAME": "Host", "GIT_COMMITTER_EMAIL": "host@example.com",
           "GIT_AUTHOR_DATE": "@1700000000 +0000", "GIT_COMMITTER_DATE": "@1700000000 +0000"}

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True,
                              check=True).stdout

    git("init", "-q", "-b", "main")
    (repo / "src").mkdir()
    (repo / "src" / "app.py").write_text("".join(f"line {i}\n" for i in range(40)))
    (repo / "README.md").write_text("# imported\n")
    git("add", "-A")
    git("commit", "-qm", "one")
    git("switch", "-qc", "side")
    (repo / "side.txt").write_text("side\n")
    git("add", "-A")
    git("commit", "-qm", "on side")
    git("switch", "-q", "main")
    (repo / "src" / "app.py").write_text("".join(f"line {i}{'!' if i == 20 else ''}\n" for i in range(40)))
    git("commit", "-qam", "main edits app")
    git("merge", "-q", "--no-edit", "side")
    git("tag", "-a", "v2", "-m", "version two")
    (repo / "README.md").write_text("# imported, stashed\n")
    git("stash", "-q")
    git("gc", "-q")
    (repo / "README.md").write_text("# imported, staged\n")
    git("add", "README.md")
    (repo / "src" / "app.py").write_text("line 0, unstaged\n" + "".join(f"line {i}\n" for i in range(1, 40)))
    (repo / "new.txt").write_text("untracked\n")
    assert list((repo / ".git" / "objects" / "pack").glob("*.pack"))
    assert (repo / ".git" / "packed-refs").exists()
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as z:
        for path in sorted(repo.rglob("*")):
            if path.is_file():
                z.write(path, path.relative_to(repo).as_posix())
    outputs = call(app, "git.importedRepository", base64.b64encode(data.getvalue()).decode(),
                   READ_COMMANDS)
    for command, got in zip(READ_COMMANDS, outputs, strict=True):
        want = subprocess.run(command, shell=True, cwd=repo, env=env, capture_output=True,
                              text=True, check=True).stdout
        assert not got["isError"], (command, got)
        assert got["output"] == (want.rstrip("\n") or "(no output)"), command


def test_a_huge_object_meets_the_shells_write_budget(app):
    r = call(app, "git.hugeObject")
    assert r["add"]["isError"]
    assert "ENOSPC" in r["add"]["output"] and "maxOutputBytes" in r["add"]["output"]
    assert r["size"] == 300_000  # the file is there, untouched
    # The repository is still whole: the small commit, the big file untracked.
    assert r["after"]["output"] == "?? big.bin\n" + r["after"]["output"].split("\n", 1)[1]
    assert r["after"]["output"].endswith(" small")


def test_reading_commands_change_nothing_so_a_plan_run_may_use_them(app):
    r = call(app, "git.readingInAPlanRun")
    assert not r["made"][0]["isError"], r["made"]
    (read,) = r["read"]
    assert not read["isError"], read
    lines = read["output"].splitlines()
    assert lines[0] == " M a.txt" and "1 file changed, 1 insertion(+), 1 deletion(-)" in read["output"]
    assert lines[-1].endswith(" one")
    assert r["done"]["stopReason"] == "stop"
