"""The permission rules: precedence, globs, grants, malformed rules, and the shell
splitter that turns a command line into the simple commands a rule matches."""

from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.errors import UsageError
from harness.policy.permissions import Rules, Verdict, simple_commands

TOOLS: dict[str, Any] = {"read": "path", "write": "path", "bash": "command", "ask_user": "none"}
DEFAULTS = {
    "read": "allow",
    "write": {"*": "ask", "docs/**": "allow", "docs/secret/**": "deny"},
    "bash": {"*": "ask", "ls *": "allow", "git *": "allow", "git push *": "deny",
             "echo *": "allow", "cat *": "allow", "rm *": "ask"},
}


@dataclass(frozen=True)
class Case:
    id: str
    tool: str
    subject: str | None
    action: str
    patterns: tuple[str, ...] | None = None  # None: not checked
    rules: dict[str, Any] = field(default_factory=lambda: DEFAULTS)
    granted: frozenset[tuple[str, str]] = frozenset()


def bash(*pairs: tuple[str, str]) -> dict[str, Any]:
    return {"bash": dict(pairs)}


def path(*pairs: tuple[str, str]) -> dict[str, Any]:
    return {"write": dict(pairs)}


CASES = [
    # --- tools and plain actions
    Case("no entry is allow", "bash", "rm -rf /", "allow", (), rules={"read": "deny"}),
    Case("plain action", "read", "a.txt", "allow", ("*",)),
    Case("plain deny", "read", "a.txt", "deny", ("*",), rules={"read": "deny"}),
    Case("page tool plain ask", "ask_user", None, "ask", ("*",), rules={"ask_user": "ask"}),
    Case("page tool ask granted", "ask_user", None, "allow", rules={"ask_user": "ask"},
         granted=frozenset({("ask_user", "*")})),
    Case("map without a subject asks", "write", None, "ask", ()),
    # --- precedence
    Case("longest wins over *", "write", "docs/a.md", "allow", ("docs/**",)),
    Case("longer deny wins over shorter allow", "write", "docs/secret/k", "deny",
         ("docs/secret/**",)),
    Case("* is the weakest", "write", "x", "deny", ("x",),
         rules=path(("*", "allow"), ("x", "deny"))),
    Case("* weaker than a one-character pattern", "write", "x", "allow", ("?",),
         rules=path(("*", "deny"), ("?", "allow"))),
    Case("tie goes to deny", "write", "ab", "deny", ("a?",),
         rules=path(("*", "allow"), ("?b", "ask"), ("a?", "deny"))),
    Case("tie ask over allow", "write", "ab", "ask", ("?b",),
         rules=path(("*", "allow"), ("?b", "ask"), ("a?", "allow"))),
    Case("a map is never collapsed to *", "write", None, "ask", (), rules=path(("*", "allow"))),
    Case("* in a map matches nested paths", "write", "a/b/c", "allow", ("*",),
         rules=path(("*", "allow"))),
    Case("unmatched subject in a map is ask", "write", "src/a.py", "ask", (),
         rules=path(("docs/**", "allow"))),
    # --- path globs
    Case("star stays in one segment", "write", "a/b.md", "ask", (), rules=path(("*.md", "allow"))),
    Case("star in the segment", "write", "b.md", "allow", ("*.md",), rules=path(("*.md", "allow"))),
    Case("globstar below", "write", "docs/a/b/c.md", "allow", ("docs/**",)),
    Case("globstar not the directory itself", "write", "docs", "ask", ("*",)),
    Case("globstar prefix at top", "write", "a.py", "allow", ("**/*.py",),
         rules=path(("**/*.py", "allow"))),
    Case("globstar prefix deep", "write", "x/y/a.py", "allow", ("**/*.py",),
         rules=path(("**/*.py", "allow"))),
    Case("globstar middle zero", "write", "a/b", "allow", ("a/**/b",),
         rules=path(("a/**/b", "allow"))),
    Case("globstar middle many", "write", "a/x/y/b", "allow", ("a/**/b",),
         rules=path(("a/**/b", "allow"))),
    Case("question mark one char", "write", "a1.txt", "allow", ("a?.txt",),
         rules=path(("a?.txt", "allow"))),
    Case("question mark not slash", "write", "a/txt", "ask", (), rules=path(("a?txt", "allow"))),
    Case("class", "write", "b.txt", "allow", ("[abc].txt",), rules=path(("[abc].txt", "allow"))),
    Case("range", "write", "q.txt", "allow", ("[a-z].txt",), rules=path(("[a-z].txt", "allow"))),
    Case("negated class", "write", "x.txt", "ask", (), rules=path(("[!x].txt", "allow"))),
    Case("negated class other", "write", "y.txt", "allow", ("[!x].txt",),
         rules=path(("[!x].txt", "allow"))),
    Case("negated class never slash", "write", "a/b", "ask", (), rules=path(("a[!x]b", "allow"))),
    Case("root is dot", "write", ".", "allow", ("*",),
         rules=path(("*", "allow"), ("src/**", "deny"))),
    Case("globstar chain", "write", "a/b/x/c/d", "allow", ("**/b/**/c/**",),
         rules=path(("**/b/**/c/**", "allow"))),
    Case("globstar chain needs order", "write", "a/c/x/b/d", "ask", (),
         rules=path(("**/b/**/c/**", "allow"))),
    Case("many globstars stay fast", "write", "/".join(["a"] * 3000), "ask", (),
         rules=path(("**/a/**/a/**/a/**/a/**/a/**/x", "allow"), ("**/**/**/**/**/y", "allow"))),
    Case("many stars stay fast", "write", "a" * 3000 + "b", "ask", (),
         rules=path(("*a*a*a*a*a*a*a*a*a*a*a*c", "allow"))),
    # --- grants
    Case("always grants an ask", "bash", "rm x", "allow", ("rm *",),
         granted=frozenset({("bash", "rm *")})),
    Case("a grant of another tool does not count", "bash", "rm x", "ask", ("rm *",),
         granted=frozenset({("write", "rm *")})),
    Case("deny after always", "bash", "git push origin", "deny", ("git push *",),
         granted=frozenset({("bash", "git push *"), ("bash", "*"), ("bash", "git *")})),
    Case("path deny after always", "write", "docs/secret/k", "deny",
         granted=frozenset({("write", "docs/secret/**")})),
    Case("granted ask among others still asks", "bash", "rm a; mv a b", "ask", ("*",),
         granted=frozenset({("bash", "rm *")})),
    Case("unsplittable is never granted", "bash", "case x in a) ls;; esac", "ask", (),
         granted=frozenset({("bash", "*")})),
    # --- commands
    Case("bare command matches trailing star", "bash", "ls", "allow", ("ls *",)),
    Case("command with arguments", "bash", "ls -la /work", "allow", ("ls *",)),
    Case("prefix is not a word", "bash", "lsof", "ask", ("*",)),
    Case("deny longest", "bash", "git push --force", "deny", ("git push *",)),
    Case("quotes removed", "bash", '"git" push', "deny", ("git push *",)),
    Case("escapes removed", "bash", "g\\it p'u'sh x", "deny", ("git push *",)),
    Case("spaces normalised", "bash", "git    push\torigin", "deny", ("git push *",)),
    Case("pipe", "bash", "ls | git push", "deny", ("git push *",)),
    Case("pipe and", "bash", "ls |& git push", "deny"),
    Case("and", "bash", "ls && git push", "deny"),
    Case("or", "bash", "ls || git push", "deny"),
    Case("semicolon", "bash", "ls; git push", "deny"),
    Case("background", "bash", "git push & ls", "deny"),
    Case("newline", "bash", "ls\ngit push", "deny"),
    Case("all allowed", "bash", "ls | cat && echo done", "allow", ("ls *", "cat *", "echo *")),
    Case("strictest over commands", "bash", "ls; rm x; mv a b", "ask", ("rm *", "*")),
    Case("subshell", "bash", "(cd x && git push)", "deny"),
    Case("group", "bash", "{ ls; git push; }", "deny"),
    Case("command substitution", "bash", "echo $(git push)", "deny"),
    Case("substitution in quotes", "bash", 'echo "x $(git push) y"', "deny"),
    Case("backticks", "bash", "echo `git push`", "deny"),
    Case("outer keeps the substitution", "bash", "echo $(ls)", "allow", ("ls *", "echo *")),
    Case("redirection stays in the text", "bash", "echo hi > f", "allow", ("echo *",),
         rules=bash(("*", "ask"), ("echo *", "allow"), ("* > *", "deny"))),
    Case("redirection matched", "bash", "echo hi > f", "deny", ("echo * > *",),
         rules=bash(("*", "allow"), ("echo * > *", "deny"))),
    Case("leading redirection moves to the end", "bash", "> f rm x", "deny", ("rm *",),
         rules=bash(("*", "allow"), ("rm *", "deny"))),
    Case("heredoc body is not commands", "bash", "cat <<EOF\ngit push\nEOF\nls", "allow"),
    Case("heredoc quoted and dash", "bash", "cat <<-'EOF'\n\tgit push\n\tEOF\nls", "allow"),
    Case("heredoc body substitution", "bash", "cat <<EOF\n$(git push)\nEOF", "ask", ()),
    Case("assignment dropped", "bash", "FOO=1 BAR=x git push", "deny"),
    Case("bang dropped", "bash", "! git push", "deny"),
    Case("reserved words skipped", "bash", "if true; then git push; fi", "deny"),
    Case("while loop", "bash", "while ls; do echo x; done", "allow"),
    Case("for head is no command", "bash", "for f in a b; do echo $f; done", "allow",
         ("echo *",)),
    Case("bash -c", "bash", "bash -c 'ls; git push'", "deny"),
    Case("sh -c with options", "bash", "/bin/sh -ec \"git push\"", "deny"),
    Case("eval", "bash", "eval git push", "deny"),
    Case("eval quoted", "bash", "eval 'ls && git push'", "deny"),
    Case("expansion in command position", "bash", "$(echo git) push", "ask", ("*",)),
    Case("variable in command position", "bash", "$CMD x", "allow", ("*",),
         rules=bash(("*", "allow"), ("$CMD *", "deny"))),
    Case("glob in command position", "bash", "g?t push", "ask", ("*",)),
    Case("quoted dollar is literal", "bash", "'$CMD' x", "deny", ("$CMD *",),
         rules=bash(("*", "allow"), ("$CMD *", "deny"))),
    Case("comment is not a command", "bash", "ls # ; git push", "allow"),
    Case("command unmatched in a map", "bash", "mv a b", "ask", (), rules=bash(("ls *", "allow"))),
    # --- unsplittable
    Case("case", "bash", "case x in a) ls;; esac", "ask", ()),
    Case("unbalanced quote", "bash", "echo 'oops", "ask", ()),
    Case("unbalanced paren", "bash", "(ls", "ask", ()),
    Case("function", "bash", "f() { ls; }; f", "ask", ()),
    Case("arithmetic", "bash", "(( x = 1 ))", "ask", ()),
    Case("process substitution", "bash", "diff <(ls) b", "ask", ()),
    Case("unsplittable * allow becomes ask", "bash", "echo 'x", "ask", (),
         rules=bash(("*", "allow"))),
    Case("unsplittable * deny stays", "bash", "echo 'x", "deny", ("*",), rules=bash(("*", "deny"))),
    Case("unsplittable without *", "bash", "echo 'x", "ask", (), rules=bash(("echo *", "allow"))),
    Case("line too long", "bash", "ls " + "a" * 100_000, "ask", ()),
    Case("too many commands", "bash", "ls;" * 1001, "ask", ()),
    Case("many commands is fine", "bash", "ls;" * 1000, "allow", ("ls *",)),
    Case("nesting too deep", "bash", "( " * 51 + "ls" + " )" * 51, "ask", ()),
    Case("nesting fine", "bash", "( " * 50 + "ls" + " )" * 50, "allow", ("ls *",)),
    Case("substitutions too deep", "bash", "echo $(" * 51 + "ls" + ")" * 51, "ask", ()),
    Case("substitutions fine", "bash", "echo $(" * 50 + "ls" + ")" * 50, "allow"),
    Case("nested lines read too much", "bash", "eval " * 10 + "ls " * 15000, "ask", ()),
    Case("nested lines within the budget", "bash", "eval " * 2 + "ls " * 15000, "allow",
         ("eval *", "ls *"), rules=bash(("eval *", "allow"), ("ls *", "allow"))),
    Case("many stars in a long command", "bash", "a" * 50_000, "ask", ("*",),
         rules=bash(("*", "ask"), ("*a*a*a*a*a*a*a*a*a*a*a*a*c", "allow"))),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_decide(case: Case) -> None:
    verdict = Rules.parse(case.rules, TOOLS).decide(case.tool, case.subject, case.granted)
    assert verdict.action == case.action
    if case.patterns is not None:
        assert verdict.patterns == case.patterns


def test_no_rules_at_all() -> None:
    rules = Rules.parse(None, TOOLS)
    assert not rules.has_rule("bash")
    assert rules.decide("bash", "rm -rf /") == Verdict("allow", (), None)


def test_rule_display() -> None:
    rules = Rules.parse(DEFAULTS, TOOLS)
    assert rules.has_rule("write")
    assert rules.decide("bash", "git push").rule == 'bash: "git push *"'
    assert rules.decide("write", "x").rule == 'write: "*"'
    assert rules.decide("bash", "rm a && mv a b").rule == 'bash: "rm *", "*"'


ERRORS = [
    ("not an object", ["read"], "'permissions'"),
    ("unknown tool", {"rd": "allow"}, "permissions.rd"),
    ("unknown tool lists the known", {"rd": "allow"}, "'ask_user', 'bash', 'read', 'write'"),
    ("bad action", {"read": "yes"}, "permissions.read"),
    ("bad action type", {"read": True}, "permissions.read"),
    ("bad action in a map", {"bash": {"ls *": "maybe"}}, 'permissions.bash["ls *"]'),
    ("empty map", {"write": {}}, "permissions.write"),
    ("empty pattern", {"write": {"": "allow"}}, 'permissions.write[""]'),
    ("pattern too long", {"write": {"a" * 1001: "allow"}}, "more than 1,000"),
    ("unclosed class", {"write": {"a[bc": "allow"}}, 'permissions.write["a[bc"]'),
    ("unclosed class says so", {"bash": {"ls [": "allow"}}, "not closed"),
    ("bad range", {"write": {"[z-a]": "allow"}}, 'permissions.write["[z-a]"]'),
    ("too many patterns", {"bash": {f"c{i}": "allow" for i in range(201)}}, "more than 200"),
    ("map for a page tool", {"ask_user": {"*": "allow"}},
     "give an action: page tool 'ask_user' has no path or command to match"),
]


@pytest.mark.parametrize(("raw", "fragment"), [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_malformed_rules(raw: object, fragment: str) -> None:
    with pytest.raises(UsageError) as info:
        Rules.parse(raw, TOOLS)
    assert fragment in str(info.value)


def test_two_hundred_patterns_and_long_ones_are_fine() -> None:
    Rules.parse({"bash": {f"c{i}": "allow" for i in range(200)}}, TOOLS)
    Rules.parse({"write": {"a" * 1000: "allow"}}, TOOLS)


SPLITS = [
    ("ls -la | grep x && echo 'hi  there' > f", ["ls -la", "grep x", "echo hi  there > f"]),
    ('FOO=1 "g"it push', ["git push"]),
    ("echo $(rm -rf x) `ls`", ["rm -rf x", "ls", "echo $(rm -rf x) `ls`"]),
    ("cat <<EOF\nrm x\nEOF\nls", ["cat << EOF", "ls"]),
    ("x=$(cat <<'EOF'\nrm x\nEOF\n)", ["cat << EOF"]),
    ("bash -c 'rm x; ls'", ["bash -c rm x; ls", "rm x", "ls"]),
    ("{ ls; } 2>&1 | wc -l", ["ls", "wc -l"]),
    ("ls 2>/dev/null >&2", ["ls 2> /dev/null >&2"]),
    ("echo ${a:-$(rm y)}", ["rm y", "echo ${a:-$(rm y)}"]),
    ("for x in $(ls); do rm $x; done", ["ls", "rm $x"]),
    ("ls \\\n  -la", ["ls -la"]),
    ("", []),
    ("FOO=1", []),
    ("case $x in *) ls;; esac", None),
    ("echo \"unterminated", None),
    ("cat <<EOF\nno end", None),
    ("arr=(a b)", None),
    ("echo $((1 + 2))", None),
]


@pytest.mark.parametrize(("line", "expected"), SPLITS, ids=[s[0][:30] for s in SPLITS])
def test_simple_commands(line: str, expected: list[str] | None) -> None:
    assert simple_commands(line) == expected


_RESERVED = {"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "time", "for",
             "select", "case", "esac", "function", "coproc", "eval", "sh", "bash", "in"}
WORD = st.text("abcdefgh-./", min_size=1, max_size=6).filter(
    lambda w: w not in _RESERVED and not w.startswith("-"))
OPERATOR = st.sampled_from([" | ", " |& ", " && ", " || ", "; ", " & ", "\n"])
WRAP = st.sampled_from(["{}", "( {} )", "{{ {}; }}", "echo $({})", "echo `{}`",
                        "bash -c '{}'", "A=1 {}", "! {}", "{} > out", "if {}; then :; fi"])
QUOTE = st.sampled_from(["{}", "'{}'", '"{}"'])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.lists(st.tuples(WORD, QUOTE), min_size=1, max_size=4), WRAP),
                min_size=1, max_size=6),
       st.lists(OPERATOR, min_size=5, max_size=5), st.data())
def test_a_denied_command_denies_the_line(commands: list, operators: list[str],
                                          data: st.DataObject) -> None:
    texts = [" ".join(w for w, _ in words) for words, _ in commands]
    parts = [wrap.format(" ".join(q.format(w) for w, q in words)) for words, wrap in commands]
    line = parts[0] + "".join(op + part for op, part in zip(operators, parts[1:], strict=False))
    denied = data.draw(st.sampled_from(texts))
    rules = Rules.parse({"bash": {"*": "allow", denied + " *": "deny"}}, TOOLS)
    commands = simple_commands(line) or []
    assert any(c == denied or c.startswith(denied + " ") for c in commands), commands
    assert rules.decide("bash", line).action == "deny"
