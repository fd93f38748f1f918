"""The git step's baseline: the host's own git on the same files as the bench page's
``gitOps`` (tooling/bench/page/bench.mjs writes the same tree): `git status --short`,
`git diff` and `git commit -qam` of 10 changed files in a 1,000-file repository, each
timed around the process (its start included, as the shell's includes the command's)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path


def _file(i: int, changed: bool = False) -> str:
    return "".join(f"line {j} of file {i}, changed\n" if changed and j == 10
                   else f"line {j} of file {i}\n" for j in range(30))


def host_git(files: int = 1000, changed: int = 10, reps: int = 3) -> dict[str, list[float]]:
    """Samples (ms) of each command, as the page's gitOps gives them."""
    git = shutil.which("git")
    if git is None:
        raise RuntimeError("the host has no git (make host-git installs Debian's)")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/nonexistent",
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@x",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "b@x"}
    samples: dict[str, list[float]] = {"status": [], "statusAgain": [], "diff": [], "commit": []}
    with tempfile.TemporaryDirectory(prefix="pyharness-bench-git-") as tmp:
        repo = Path(tmp)

        def run(*args: str) -> float:
            t = time.perf_counter()
            subprocess.run([git, *args], cwd=repo, env=env, check=True, capture_output=True)
            return (time.perf_counter() - t) * 1000

        for i in range(files):
            path = repo / "src" / f"d{i // 20}" / f"f{i}.txt"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(_file(i))
        run("init", "-q")
        run("add", "-A")
        run("commit", "-qm", "base")
        for r in range(reps):
            for i in range(changed):
                n = (i * 37) % files
                (repo / "src" / f"d{n // 20}" / f"f{n}.txt").write_text(_file(n, r % 2 == 0))
            samples["status"].append(run("status", "--short"))
            samples["statusAgain"].append(run("status", "--short"))
            samples["diff"].append(run("diff"))
            samples["commit"].append(run("commit", "-qam", "ten"))
    return samples
