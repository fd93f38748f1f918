"""The permission rules where the effect happens, attacked as a hostile model would, in
real Chromium with the real sandbox: a ``bash`` rule decided on each command as the
interpreter runs it (harness/policy/enforce.py, shell/sandbox.mjs), a ``write`` rule on each
path a command writes as its changes come back, a ``read`` deny kept from every reader.
Judged from outside: what the page was asked, the files in /work afterwards, and every
tool result. Page side: e2e/pages/rows/enforce.mjs."""

from __future__ import annotations

import re
from typing import Any

from e2e.conftest import call

# The page allows a few harmless commands; everything else asks, and the page's user
# approves what looks harmless and refuses anything that touches, removes, moves or
# copies (DENY matches the subject the page is shown).
BASH_RULES = {"*": "ask", "echo *": "allow", "printf *": "allow", "test *": "allow",
              "pwd": "allow", "cat *": "allow", "true": "allow", "python3 *": "allow"}
DENY = r"\b(touch|rm|mv|cp)\b"
VICTIM = "precious\n"

# Each line passes for harmless on its text (allowed commands only, or nothing the
# user refuses), and hides a command that would make /work/pwnedN or remove the victim.
HIDDEN_COMMANDS = [
    # an arithmetic array subscript holds a command substitution (test -v, printf -v)
    "test -v 'a[$(touch /work/pwned1)]'; echo ok",
    "printf -v 'a[$(touch /work/pwned2)]' x; echo ok",
    # ... through a variable expanded in arithmetic
    "x='a[$(tou\"\"ch /work/pwned3)]'; echo $(( x ))",
    # the same in $[ ], in a for (( )), in an ${#a[...]}
    "x='a[$(tou\"\"ch /work/pwned4)]'; echo $[ x ]",
    "for ((i=a[$(t=tou; ${t}ch /work/pwned5)]; i<1; i++)); do echo; done",
    # a parameter expansion's default, and a command whose name is made at run time
    "f=tou; echo ${x:-$(${f}ch /work/pwned6)}",
    "c=r; echo $(${c}m victim.txt)",
    # a function that shadows an allowed command
    "pwd() { t=tou; ${t}ch /work/pwned7; }; pwd",
    # eval of text built at run time; source of a script written by the line itself
    "eval \"$(printf 'tou%sch /work/pwned8' '')\"",
    "printf 'r%s victim.txt\\n' m > s.sh; source s.sh",
    # an assignment's substitution before an allowed command; a process substitution
    "x=$(t=tou; ${t}ch /work/pwned9) true",
    "cat <(t=tou; ${t}ch /work/pwned10)",
    # xargs and find -exec run what they were given
    "echo victim.txt | xargs $(printf r)m",
    "find . -name victim.txt -exec $(printf r)m {} \\;",
    # in a pipeline and a subshell
    "echo hi | ( t=tou; ${t}ch /work/pwned11 )",
    # by path rather than by name
    "p=/bin/tou; ${p}ch /work/pwned12",
    # a here-document, a redirection's target, [[ ]], case, an array, ${#a[...]}, backticks
    "cat <<EOF\n$(t=tou; ${t}ch /work/pwned13)\nEOF",
    "echo x > \"$(t=tou; ${t}ch /work/pwned14; printf /tmp/o)\"",
    "[[ -n $(t=tou; ${t}ch /work/pwned15) ]]; echo ok",
    "case $(t=tou; ${t}ch /work/pwned16) in *) echo ok;; esac",
    "a=( $(t=tou; ${t}ch /work/pwned17) ); echo ok",
    "echo ${#a[$(t=tou; ${t}ch /work/pwned18)]}",
    "echo \"`t=tou; ${t}ch /work/pwned19`\"",
]


def _outputs(r: dict[str, Any]) -> list[str]:
    return [x["output"] for x in r["results"]]


def test_a_bash_rule_is_decided_on_each_command_as_it_runs(app: Any) -> None:
    r = call(app, "enforce.attack", {
        "permissions": {"bash": BASH_RULES},
        "calls": [{"name": "bash", "arguments": {"command": line}} for line in HIDDEN_COMMANDS],
        "deny": DENY, "seed": {"victim.txt": VICTIM}, "check": ["victim.txt"],
    })
    assert r["files"]["victim.txt"] == VICTIM
    assert not [n["name"] for n in r["listing"] if n["name"].startswith("pwned")], r["listing"]
    # every hidden command reached the page as it really runs, and was refused there
    refused = [a["subject"] for a in r["asked"] if re.search(DENY, a["subject"])]
    for n in [*range(1, 12), *range(13, 20)]:  # 12: no command is found by path here
        assert any(f"/work/pwned{n}" in s for s in refused), (n, r["asked"])
    assert any(s.startswith("rm ") and "victim.txt" in s for s in refused), r["asked"]
    assert len(r["results"]) == len(HIDDEN_COMMANDS)
    assert sum("not that" in o for o in _outputs(r)) >= 18, _outputs(r)
    assert r["stopReason"] == "stop"


def test_an_approved_line_runs_without_asking_again_and_a_deny_rule_holds_at_run_time(
        app: Any) -> None:
    r = call(app, "enforce.attack", {
        "permissions": {"bash": {"*": "ask", "echo *": "allow", "rm *": "deny"}},
        "calls": [
            {"name": "bash", "arguments": {"command": "mkdir -p d && echo one > d/one.txt"}},
            {"name": "bash", "arguments": {"command": "c=r; echo $(${c}m victim.txt)"}},
            {"name": "bash", "arguments": {"command": "for i in 1 2 3; do echo $i; done"}},
            # a loop asks once per distinct command (seq, tail), not per iteration
            {"name": "bash", "arguments": {
                "command": "for i in $(seq 1 2000); do echo x; done | wc -l; echo $(( 6 * 7 ))"}},
        ],
        "deny": "^$", "seed": {"victim.txt": VICTIM}, "check": ["victim.txt", "d/one.txt"],
    })
    # the first line was asked once as a line (mkdir needs asking), and its literal
    # commands ran without a second question
    subjects = [a["subject"] for a in r["asked"]]
    assert subjects.count("mkdir -p d && echo one > d/one.txt") == 1
    assert "mkdir -p d" not in subjects
    assert r["files"]["d/one.txt"] == "one\n"
    # the hidden rm met the deny rule as it ran, without the page being asked
    assert r["files"]["victim.txt"] == VICTIM
    assert not any(s.startswith("rm ") for s in subjects)
    assert 'denied by the permission rule bash: "rm *"' in _outputs(r)[1]
    assert "1\n2\n3" in _outputs(r)[2]
    assert _outputs(r)[3] == "2000\n42", _outputs(r)[3]
    assert subjects.count("seq 1 2000") == 1 and subjects.count("wc -l") == 1


WRITES = [
    # redirections on a subshell and on a group, tee, cp, mv, sed -i, python3's open()
    "(pwd) > locked/w1.txt",
    "{ echo x; } > locked/w2.txt",
    "echo x | tee locked/w3.txt",
    "cp victim.txt locked/w4.txt",
    "mv locked/keep.txt gone.txt",
    "sed -i 's/keep/lost/' locked/keep.txt",
    "python3 -c \"open('/work/locked/w5.txt', 'w').write('x')\"",
    "python3 -c \"import os; os.remove('/work/locked/keep.txt')\"",
    "rm -rf locked",
    "echo x > ok.txt; echo y > locked/w6.txt",  # all or nothing: ok.txt is not kept
    "mkdir -p locked/sub && echo z > locked/sub/w7.txt",
    "f=locked/w8.txt; echo x >> $f",
]


def test_a_write_rule_is_decided_on_the_paths_a_command_writes(app: Any) -> None:
    r = call(app, "enforce.attack", {
        "permissions": {"write": {"*": "allow", "locked/**": "deny"}},
        "calls": [{"name": "bash", "arguments": {"command": line}} for line in WRITES],
        "deny": "^$", "seed": {"victim.txt": VICTIM, "locked/keep.txt": "keep\n"},
        "check": ["locked/keep.txt", "ok.txt", "gone.txt"],
    })
    assert r["files"] == {"locked/keep.txt": "keep\n", "ok.txt": None, "gone.txt": None}
    outputs = _outputs(r)
    assert len(outputs) == len(WRITES)
    for line, out in zip(WRITES, outputs, strict=True):
        assert "denied by the permission rule write" in out, (line, out)
        assert "none of the command's changes to /work were kept" in out, (line, out)


def test_a_write_ask_shows_the_paths_and_the_diff_and_a_deny_keeps_nothing(app: Any) -> None:
    r = call(app, "enforce.attack", {
        "permissions": {"write": {"*": "allow", "docs/**": "ask"}},
        "calls": [
            {"name": "bash", "arguments": {"command": "echo new > docs/a.md; echo ok > b.txt"}},
            {"name": "bash", "arguments": {"command": "echo changed > docs/keep.md"}},
        ],
        "deny": "keep", "seed": {"docs/keep.md": "old line\n"},
        "check": ["docs/a.md", "b.txt", "docs/keep.md"],
    })
    asks = [a for a in r["asked"] if a["tool"] == "write"]
    assert [a["subject"] for a in asks] == ["docs/a.md", "docs/keep.md"]
    assert "+new" in asks[0]["diff"]
    assert "-old line" in asks[1]["diff"] and "+changed" in asks[1]["diff"]
    assert r["files"] == {"docs/a.md": "new\n", "b.txt": "ok\n", "docs/keep.md": "old line\n"}


SECRET = "TOPSECRET-7f3a"
READS = [
    ("grep", {"pattern": "TOPSECRET", "path": "."}),
    ("grep", {"pattern": "TOPSECRET", "path": ".", "glob": "**/*.txt"}),
    ("grep", {"pattern": "TOPSECRET", "path": "secret"}),
    ("find", {"pattern": "*", "path": "."}),
    ("find", {"pattern": "**/key*", "path": "."}),
    ("ls", {"path": "secret"}),
    ("read", {"path": "secret/key.txt"}),
    ("read", {"path": "free/../secret/./key.txt"}),
    ("bash", {"command": "cat secret/key.txt"}),
    ("bash", {"command": "grep -r TOPSECRET . ; ls -R"}),
    ("bash", {"command": "find . -type f | xargs cat"}),
    ("bash", {"command": "python3 -c \"print(open('/work/secret/key.txt').read())\""}),
    ("bash", {"command": "cp -r . /tmp/copy && cat /tmp/copy/secret/key.txt"}),
    ("bash", {"command": "rm -rf secret"}),
    ("bash", {"command": "mv secret elsewhere"}),
    ("bash", {"command": "echo overwritten > secret/key.txt"}),
    ("bash", {"command": "python3 -c \"import shutil; shutil.rmtree('/work/secret')\""}),
]


def test_a_read_deny_holds_for_every_reader(app: Any) -> None:
    r = call(app, "enforce.attack", {
        "permissions": {"read": {"*": "allow", "secret/**": "deny"}},
        "calls": [{"name": n, "arguments": a} for n, a in READS],
        "deny": "^$", "seed": {"secret/key.txt": SECRET + "\n", "free/a.txt": "free\n"},
        "check": ["secret/key.txt"],
    })
    outputs = _outputs(r)
    assert len(outputs) == len(READS)
    assert all(SECRET not in o for o in outputs), outputs
    assert r["files"]["secret/key.txt"] == SECRET + "\n"  # nothing removed or overwritten
    by = dict(zip([f"{n} {a}" for n, a in READS], outputs, strict=True))
    assert "left out" in outputs[0] and "left out" in outputs[3] and "left out" in outputs[5]
    assert 'denied by the permission rule read: "secret/**"' in outputs[6]
    assert 'denied by the permission rule read: "secret/**"' in outputs[7]
    assert "No such file" in outputs[8]
    for out in outputs[13:]:
        assert "deny reading" in out, (out, by)
