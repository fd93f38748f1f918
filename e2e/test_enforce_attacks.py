"""More attacks on the permission rules where the effect happens, written as a hostile
model output would (issue 28, classes 1 and 2), in real Chromium with the real sandbox.
Each row asserts the SAFE outcome, judged from outside: the files in /work afterwards,
what the page was asked, and every tool result. Eight rows were first written as
bypasses that worked (strict xfails); their causes were fixed. Page side:
e2e/pages/rows/enforce_attacks.mjs."""

from __future__ import annotations

import re
from typing import Any

import pytest

from e2e.conftest import call

VICTIM = "precious\n"
SECRET = "TOPSECRET-7f3a"
HIDDEN_NAME = "zq9-hidden-name"  # the name of a read-denied file: no output may say it
TOUCH_OR_RM = r"\b(touch|rm|mv|cp)\b"


def _outputs(r: dict[str, Any]) -> list[str]:
    return [x["output"] for x in r["results"]]


def _bash(*lines: str) -> list[dict[str, Any]]:
    return [{"name": "bash", "arguments": {"command": line}} for line in lines]


def _attack(app: Any, **args: Any) -> dict[str, Any]:
    r: dict[str, Any] = call(app, "enforce_attacks.attack", {"deny": "^$", **args})
    assert r["stopReason"] == "stop", r
    assert len(r["results"]) == len(args["calls"]), r["results"]
    return r


# --- the bash rule as commands run --------------------------------------------------

# Each line passes for harmless on its text and hides a `touch /work/pwnedN` behind a
# way bash (or just-bash) runs a command that the existing rows do not try: wrappers
# (command, builtin, exec, time, timeout, env, xargs sh -c, bash -c), traps, prompt
# expansion, arithmetic in [[ ]] / declare -i / let / unset / read -a, mapfile's
# callback, aliases, sourcing from a here-string, awk's system().
WRAPPED = [
    "t=tou; command ${t}ch /work/pwned1",
    "t=tou; builtin ${t}ch /work/pwned2 2>/dev/null; command -p ${t}ch /work/pwned2",
    "t=tou; ( exec ${t}ch /work/pwned3 )",
    "t=tou; time ${t}ch /work/pwned4",
    "t=tou; timeout 5 ${t}ch /work/pwned5",
    "t=tou; env X=1 ${t}ch /work/pwned6",
    "t=tou; echo /work/pwned7 | xargs -I{} sh -c \"${t}ch {}\"",
    "t=tou; bash -c \"${t}ch /work/pwned8\"",
    "t=tou; trap \"${t}ch /work/pwned9\" EXIT; echo ok",
    "x='$(t=tou; ${t}ch /work/pwned10)'; echo \"${x@P}\"",
    "[[ 'a[$(t=tou; ${t}ch /work/pwned11)]' -eq 0 ]]; echo ok",
    "declare -i n='a[$(t=tou; ${t}ch /work/pwned12)]'; echo ok",
    "let 'n=a[$(t=tou; ${t}ch /work/pwned13)]'; echo ok",
    "declare -a a; unset 'a[$(t=tou; ${t}ch /work/pwned14)]'; echo ok",
    "printf 'x\\n' | mapfile -C 't=tou; ${t}ch /work/pwned15 #' -c 1 arr; echo ok",
    "shopt -s expand_aliases; t=tou; alias pw=\"${t}ch /work/pwned16\"; eval pw",
    "t=tou; source /dev/stdin <<< \"${t}ch /work/pwned17\"",
    "awk 'BEGIN { system(\"tou\" \"ch /work/pwned18\") }'",
    "t=tou; f() { \"$@\"; }; f ${t}ch /work/pwned19",
    "t=tou; printf '%s\\n' /work/pwned20 | while read -r p; do ${t}ch \"$p\"; done",
    "t=tou; ${t}ch /work/pwned21 & wait",
    "t=tou; coproc ${t}ch /work/pwned22; wait",
    "t=tou; PROMPT_COMMAND=\"${t}ch /work/pwned23\"; BASH_ENV=/dev/null; echo ok",
    "t=tou; find . -maxdepth 0 -exec sh -c \"${t}ch /work/pwned24\" \\;",
]


def test_wrappers_traps_prompt_and_arithmetic_expansions_are_asked_as_they_run(
        app: Any) -> None:
    r = _attack(app, permissions={"bash": {"*": "ask", "echo *": "allow"}},
                calls=_bash(*WRAPPED), deny=TOUCH_OR_RM, seed={"victim.txt": VICTIM})
    made = [p for p in r["all"] if p.startswith("pwned")]
    assert made == [], (made, r["asked"], _outputs(r))
    # each route that reaches a touch (or a command that runs one) reached the page as
    # that command, expanded, and was refused there; the other routes run nothing
    # (just-bash has no trap, no coproc, no prompt expansion, no mapfile callback,
    # awk without system(), no /dev/stdin)
    run_time = [a["subject"] for a in r["asked"] if a["subject"] not in WRAPPED]
    assert "xargs -I{} sh -c touch {}" in run_time, run_time
    for n in [*range(1, 7), 8, *range(11, 15), 16, 20, 21, 24]:
        assert any(f"/work/pwned{n}" in s and re.search(TOUCH_OR_RM, s) for s in run_time), \
            (n, run_time)
    assert all("denied by the user" in o or "ok" in o or "not supported" in o
               or "No such file" in o or "error" in o or o.startswith("$(")
               for o in _outputs(r)), _outputs(r)


def test_a_deny_rule_holds_for_wrapped_and_dynamic_commands_without_asking(app: Any) -> None:
    r = _attack(app, permissions={"bash": {"*": "ask", "echo *": "allow", "rm *": "deny",
                                           "*rm *": "deny"}},
                calls=_bash("c=r; ${c}m victim.txt",
                            "c=r; command ${c}m victim.txt",
                            "c=r; xargs ${c}m <<< victim.txt",
                            "c=r; eval \"${c}m victim.txt\"",
                            "c=r; for f in victim.txt; do ${c}m $f; done",
                            "c=r; echo ok | ${c}m victim.txt"),
                seed={"victim.txt": VICTIM}, check=["victim.txt"])
    assert r["files"]["victim.txt"] == VICTIM, (_outputs(r), r["asked"])
    assert not [a for a in r["asked"] if a["subject"].startswith("rm ")], r["asked"]
    assert sum("denied by the permission rule bash" in o for o in _outputs(r)) == 6, _outputs(r)


def test_the_literal_shortcut_covers_only_the_words_the_user_saw(app: Any) -> None:
    # The user approves a line that removes one file named "victim.txt backup" (quoted);
    # the same line then removes two files, victim.txt and backup, through a variable.
    # Joined by spaces both read "rm -f victim.txt backup", so the second is taken for
    # the first and runs without the question the page would have refused.
    r = _attack(app, permissions={"bash": {"*": "ask"}},
                calls=_bash("rm -f 'victim.txt backup'; x=victim.txt; rm -f $x backup"),
                deny=r"^rm -f victim\.txt backup$", seed={"victim.txt": VICTIM},
                check=["victim.txt"])
    assert r["files"]["victim.txt"] == VICTIM, (r["asked"], _outputs(r))


def test_a_command_of_over_100000_characters_keeps_its_deny_and_shows_its_tail(
        app: Any) -> None:
    # 2**17 characters of "a" before the victim's name: the command the gate sends is
    # cut at 100,001 characters, decided with no subject (the "*" entry: ask, not the
    # "rm *" deny), and the page is asked about a text without the victim's name.
    grow = "; ".join(["x=$x$x"] * 17)
    line = f"x=a; {grow}; c=r; ${{c}}m -f /tmp/$x vic''tim.txt"
    r = _attack(app, permissions={"bash": {"*": "ask", "rm *": "deny"}},
                calls=_bash(line), deny="victim", seed={"victim.txt": VICTIM},
                check=["victim.txt"])
    shown = [len(a["subject"]) for a in r["asked"]]
    assert r["files"]["victim.txt"] == VICTIM, (shown, _outputs(r)[0][-300:])


PATCH_GATE = ("import js\nfrom pyodide.ffi import create_proxy\n"
              "has = js.Set.prototype.has\n"
              "def lying(this, key):\n"
              "    return (isinstance(key, str) and ('r' + 'm') in key) or has.call(this, key)\n"
              "js.Set.prototype.has = create_proxy(lying, capture_this=True)\n")


def test_sandbox_code_that_skips_asking_gains_nothing_past_the_write_rule(app: Any) -> None:
    # python3 (allowed) rewires the sandbox so that it no longer asks about rm (every Set
    # says it holds an "rm" key, so the line's allowed cache does), and leaves a JS timer
    # that would write into the denied folder while a later command of the run sleeps.
    # A line that ran the model's code under a bash rule gets no successor in its
    # sandbox: the next call runs in a fresh one (no patch, no timer), where rm is asked
    # again and the write rule holds.
    patch = PATCH_GATE + ("def later():\n"
                          "    open('/work/locked/timer.txt', 'w').write('pwned')\n"
                          "js.setTimeout(create_proxy(later), 500)\n")
    r = _attack(app, permissions={"bash": {"*": "ask", "python3 *": "allow", "echo *": "allow"},
                                  "write": {"*": "allow", "locked/**": "deny"}},
                calls=[*_bash(f"cat > /tmp/p.py <<'EOF'\n{patch}EOF\npython3 /tmp/p.py"),
                       *_bash("sleep 1.5; echo slept", "c=r; ${c}m -rf locked",
                              "c=r; ${c}m -f locked/keep.txt; echo x > locked/new.txt")],
                deny=TOUCH_OR_RM, seed={"locked/keep.txt": "keep\n"},
                check=["locked/keep.txt"])
    assert r["files"]["locked/keep.txt"] == "keep\n", _outputs(r)
    assert sorted(p for p in r["all"] if p.startswith("locked")) == ["locked", "locked/keep.txt"]
    outputs = _outputs(r)
    assert outputs[1] == "slept", outputs
    assert "denied by the user" in outputs[2], outputs
    assert "denied by the user" in outputs[3], outputs
    assert "denied by the permission rule write" in outputs[3], outputs
    assert [a["subject"] for a in r["asked"] if a["subject"].startswith("rm ")] == [
        "rm -rf locked", "rm -f locked/keep.txt"], r["asked"]


def test_sandbox_code_cannot_stop_a_later_call_from_asking(app: Any) -> None:
    r = _attack(app, permissions={"bash": {"*": "ask", "python3 *": "allow"}},
                calls=_bash(f"cat > /tmp/p.py <<'EOF'\n{PATCH_GATE}EOF\npython3 /tmp/p.py",
                            "c=r; ${c}m -f victim.txt"),
                deny=TOUCH_OR_RM, seed={"victim.txt": VICTIM}, check=["victim.txt"])
    assert r["files"]["victim.txt"] == VICTIM, r["asked"]


# --- the write rule at the apply ----------------------------------------------------

WRITE_TRICKS = [
    "ln -s /work/locked /tmp/l && echo x > /tmp/l/w1.txt; cat /tmp/l/w1.txt",
    "ln -s locked l2 && echo x > l2/w2.txt",
    "cd locked && echo x > ./w3.txt",
    "echo x > locked//w4.txt",
    "echo x > ./free/../locked/w5.txt",
    "echo x > locked/sub/../w6.txt 2>/dev/null; mkdir -p locked/sub; echo x > locked/sub/../w6.txt",
    "python3 -c \"import os; os.link('/work/locked/keep.txt', '/work/hl')\"; echo y >> hl",
    "truncate -s 0 locked/keep.txt 2>/dev/null; : > locked/keep.txt",
    "mv locked/keep.txt locked/moved.txt",
    "touch -d 2000-01-01 locked/keep.txt",
    "chmod 000 locked/keep.txt",
    "python3 -c \"import shutil; shutil.copytree('/work/free', '/work/locked/tree')\"",
    "mkdir -p t/in && echo x > t/in/w7.txt && mv t locked/t",
    "tar -cf /tmp/a.tar free && tar -xf /tmp/a.tar -C locked",
    "echo x | tee -a locked/keep.txt",
    "printf 'x' > \"locked/$(printf 'w8\\xcc\\x81.txt')\"",
]


def test_a_write_deny_holds_through_links_dots_renames_into_it_and_metadata(app: Any) -> None:
    r = _attack(app, permissions={"write": {"*": "allow", "locked/**": "deny"}},
                calls=_bash(*WRITE_TRICKS),
                seed={"locked/keep.txt": "keep\n", "free/a.txt": "a\n"},
                check=["locked/keep.txt"])
    assert r["files"]["locked/keep.txt"] == "keep\n", _outputs(r)
    assert sorted(p for p in r["all"] if p.startswith("locked")) == ["locked", "locked/keep.txt"], \
        (r["all"], _outputs(r))


def test_renaming_or_removing_a_folder_above_a_write_denied_path_is_refused(app: Any) -> None:
    # locked/** is denied, `locked` itself is not: a command that moves or removes the
    # folder takes every file below it with it.
    r = _attack(app, permissions={"write": {"*": "allow", "locked/**": "deny"}},
                calls=_bash("mv locked elsewhere",
                            "python3 -c \"import os; os.rename('/work/locked', '/work/else2')\"",
                            "mkdir -p x && mv locked x/"),
                seed={"locked/keep.txt": "keep\n"}, check=["locked/keep.txt"])
    assert r["files"]["locked/keep.txt"] == "keep\n", (r["all"], _outputs(r))


# --- the read deny, for every reader ------------------------------------------------

READ_SEED = {"secret/key.txt": SECRET + "\n", f"secret/{HIDDEN_NAME}.txt": "x\n",
             "secret/sub/deep.txt": SECRET + "\n", "free/a.txt": "free\n"}
READ_RULES = {"read": {"*": "allow", "secret/**": "deny"}}

READERS = [
    ("bash", {"command": "ls -laR /work; find / -name 'zq*' 2>/dev/null; du -a /work"}),
    ("bash", {"command": "grep -rl TOPSECRET / 2>/dev/null; cat secret/* 2>&1"}),
    ("bash", {"command": "python3 -c \"import os; print(list(os.walk('/work')))\""}),
    ("bash", {"command": "python3 -c \"import glob; print(glob.glob('/work/**', recursive=True))\""}),
    ("bash", {"command": "tar -cf - . | tar -tf -; wc -c secret/key.txt; stat secret/key.txt"}),
    ("bash", {"command": "test -e secret/key.txt && echo EXISTS; [ -d secret/sub ] && echo DIR"}),
    ("bash", {"command": "cd secret && ls -a && cat key.txt; cat ../secret/sub/deep.txt"}),
    ("bash", {"command": "diff -r free secret; cmp secret/key.txt free/a.txt"}),
    ("bash", {"command": "python3 -c \"print(open('/work/secret/sub/deep.txt').read())\" 2>&1"}),
    ("find", {"pattern": "zq*", "path": "."}),
    ("find", {"pattern": "**", "path": "secret"}),
    ("grep", {"pattern": "x", "path": "secret", "glob": "*"}),
    ("grep", {"pattern": "TOP", "path": "secret/sub"}),
    ("ls", {"path": "secret/sub"}),
    ("ls", {"path": "."}),
    ("read", {"path": "./secret//key.txt"}),
    ("read", {"path": "secret/sub/../key.txt"}),
    ("read", {"path": "/work/free/../secret/sub/deep.txt"}),
    ("edit", {"path": "secret/key.txt", "edits": [{"oldText": "TOP", "newText": "TOP"}]}),
]


def test_no_reader_shows_the_content_or_the_name_of_a_read_denied_path(app: Any) -> None:
    r = _attack(app, permissions=READ_RULES,
                calls=[{"name": n, "arguments": a} for n, a in READERS], seed=READ_SEED,
                check=["secret/key.txt"])
    outputs = _outputs(r)
    assert all(SECRET not in o for o in outputs), outputs
    assert [o for o in outputs if HIDDEN_NAME in o] == [], outputs
    assert "EXISTS" not in outputs[5] and "DIR" not in outputs[5], outputs[5]
    assert "left out" in outputs[9], outputs
    assert "EACCES: /work/secret/sub: the page's permission rules deny reading it" in outputs[13]
    assert 'denied by the permission rule read: "secret/**"' in outputs[15], outputs[15]
    assert r["files"]["secret/key.txt"] == SECRET + "\n"


def test_an_error_from_the_apply_does_not_name_a_read_denied_path(app: Any) -> None:
    # Removing or moving the folder that holds read-denied files is refused, rightly;
    # the refusal must not name the file the model was never shown.
    r = _attack(app, permissions=READ_RULES,
                calls=_bash("rm -rf secret", "mv secret elsewhere", "rm -rf /work/*"),
                seed={f"secret/{HIDDEN_NAME}.txt": SECRET + "\n"},
                check=[f"secret/{HIDDEN_NAME}.txt"])
    assert r["files"][f"secret/{HIDDEN_NAME}.txt"] == SECRET + "\n"
    outputs = _outputs(r)
    assert all("deny reading" in o for o in outputs), outputs
    assert [o for o in outputs if HIDDEN_NAME in o] == [], outputs


def test_a_write_to_a_read_denied_path_is_refused_before_anything_about_it_is_told(
        app: Any) -> None:
    big = 3000
    r = _attack(app, permissions={**READ_RULES, "write": {"*": "allow", "secret/**": "ask"}},
                shell={"maxOutputBytes": 1024},
                calls=_bash("echo x > secret/key.txt",
                            f"python3 -c \"open('/work/secret/key.txt', 'w').write('a' * {big})\""),
                seed={"secret/key.txt": SECRET + "\n"}, check=["secret/key.txt"])
    assert r["files"]["secret/key.txt"] == SECRET + "\n"
    assert [a for a in r["asked"] if SECRET in (a["diff"] or "")] == [], r["asked"]
    size_told = str(big - len(SECRET + "\n"))
    assert [o for o in _outputs(r) if size_told in o] == [], _outputs(r)
    assert all("deny reading" in o for o in _outputs(r)), _outputs(r)


def test_edit_is_a_reader_too_when_reads_before_writes_are_not_required(app: Any) -> None:
    # With readBeforeWrite off, edit needs no read first: an edit whose old text is a
    # guess tells whether the denied file holds it, and its diff shows the lines.
    r = _attack(app, permissions=READ_RULES, options={"readBeforeWrite": False},
                calls=[{"name": "edit", "arguments": {
                    "path": "secret/key.txt", "edits": [{"oldText": "TOP", "newText": "T0P"}]}},
                       {"name": "edit", "arguments": {
                    "path": "secret/key.txt", "edits": [{"oldText": "nothere", "newText": "x"}]}}],
                seed=READ_SEED, check=["secret/key.txt"])
    outputs = _outputs(r)
    assert all("SECRET" not in o for o in outputs), outputs
    assert r["files"]["secret/key.txt"] == SECRET + "\n", outputs


def test_the_builtin_tools_do_not_tell_whether_a_denied_name_exists(app: Any) -> None:
    # A guessed name under the denied folder: grep, ls and find must answer the same
    # whether it exists or not (else the name is read by guessing).
    probes = [("grep", {"pattern": "x", "path": "secret/key.txt"}),
              ("grep", {"pattern": "x", "path": "secret/nokey.txt"}),
              ("ls", {"path": "secret/sub"}),
              ("ls", {"path": "secret/nosub"})]
    r = _attack(app, permissions=READ_RULES,
                calls=[{"name": n, "arguments": a} for n, a in probes], seed=READ_SEED)
    out = _outputs(r)
    assert out[0].replace("key", "K") == out[1].replace("nokey", "K"), out
    assert out[2].replace("sub", "S") == out[3].replace("nosub", "S"), out


# --- the pause while the page is asked ----------------------------------------------


@pytest.mark.parametrize("command, asks", [
    ("c=r; ${c}m -f x", 1),
    # three commands of a pipeline asked at once, none answered
    ("c=r; ${c}m -f a | ${c}m -f b | ${c}m -f c", 1),
])
def test_a_cancel_while_the_page_is_asked_ends_the_run_within_a_second(
        app: Any, command: str, asks: int) -> None:
    r = call(app, "enforce_attacks.cancelWhileAsked", {
        "permissions": {"bash": {"*": "ask", "echo after": "allow"}}, "command": command,
        "asks": asks})
    assert not r["timedOut"], r
    assert r["endedMs"] < 1_000, r
    assert r["fsMs"] < 1_000, r
    assert r["stopReason"] == "aborted", r
    assert r["againStop"] == "stop" and r["outputs"][-1].startswith("after"), r
