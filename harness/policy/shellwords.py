"""A shell command line split into its simple commands, for the permission rules.

Only as much of the shell grammar as a rule needs: the commands a line would run, each
normalised to its words joined by single spaces (quotes and escapes removed, leading
assignments and ``!`` dropped, redirections moved to the end in order). Anything this
cannot read with certainty makes :func:`split` return None, and the caller then treats
the line as one it cannot check pattern by pattern (harness/policy/permissions.py).

This is no shell: it never expands anything. A command whose first word the shell would
expand (``$X``, ``$(...)``, a backtick, a glob or a brace) is marked ``dynamic``: no
pattern can know what it runs.
"""

from __future__ import annotations

import re
from typing import NamedTuple

MAX_LINE_CHARS = 100_000
MAX_COMMANDS = 1_000
MAX_DEPTH = 50
MAX_WORK_CHARS = 300_000  # all text read, nested lines (`eval`, `sh -c`, backticks) too

# Skipped at command position, so that the command after them is the one matched.
_SKIPPED = frozenset({"if", "then", "else", "elif", "fi", "do", "done", "while", "until",
                      "time", "!"})
_LOOPS = frozenset({"for", "select"})  # `for NAME in WORDS` up to `;`, newline or `do`
_REFUSED = frozenset({"case", "esac", "function", "coproc"})
_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "ash"})
_OPERATORS = ("&&", "||", "|&", "|", ";", "&")
_REDIRECTIONS = ("<<<", "<<-", "<<", "<>", "<&", "<", "&>>", "&>", ">>", ">&", ">|", ">")
_WORD_END = frozenset(" \t\n;&|()<>")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")
_FD_DUP = re.compile(r"(?:[0-9]+-?|-)(?=[\s;&|()<>]|\Z)")
_BACKTICK_ESCAPE = re.compile(r"\\([\\`$])")
_PARAMETER = re.compile(r"\$(?:[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-])")


class Command(NamedTuple):
    text: str  # the words, normalised, joined with single spaces
    dynamic: bool  # its first word holds an expansion: only the "*" pattern matches it
    words: str = ""  # the words without the redirections (what the interpreter runs)
    literal: bool = False  # no word holds an expansion: it runs exactly as ``argv``
    argv: tuple[str, ...] = ()  # the words one by one (``words`` joins them)


class Unsplittable(Exception):
    """The line cannot be split with certainty (or is over the bounds)."""


class _Word(NamedTuple):
    kind: str  # "word" | "redir" | "op" | "eof"
    text: str
    quoted: bool = False
    dynamic: bool = False
    assignment: bool = False


def split(line: str) -> list[Command] | None:
    """The simple commands of ``line`` (an empty list for a line of none), or None."""
    if len(line) > MAX_LINE_CHARS:
        return None
    state = _State()
    try:
        _Splitter(line, 0, state).run()
    except (Unsplittable, RecursionError):
        return None
    return state.out


class _State:
    """What the splitters of one line share: the commands found, the text read."""

    def __init__(self) -> None:
        self.out: list[Command] = []
        self.chars = 0


class _Splitter:
    def __init__(self, text: str, depth: int, state: _State) -> None:
        state.chars += len(text)
        if depth > MAX_DEPTH or state.chars > MAX_WORK_CHARS:
            raise Unsplittable("nested too deep or too much to read")
        self.s, self.i, self.depth, self.state = text, 0, depth, state
        self.out = state.out
        self.heredocs: list[tuple[str, bool, bool]] = []  # (delimiter, strip tabs, quoted)

    def run(self) -> None:
        self.parse_list(None)
        if self.heredocs:
            raise Unsplittable("a heredoc without its body")

    def nested(self, text: str) -> None:
        _Splitter(text, self.depth + 1, self.state).run()

    # --- commands --------------------------------------------------------------------

    def parse_list(self, close: str | None) -> None:
        """Commands up to ``close`` (``)`` or ``}``) or the end, each added to ``out``."""
        words: list[_Word] = []
        in_loop_head = after_compound = assigned = named = False
        while True:
            tok = self.next_token()
            if tok.kind == "eof":
                if close is not None:
                    raise Unsplittable(f"no closing {close!r}")
                self.flush(words)
                return
            if tok.kind == "op":
                if tok.text == ")":
                    if close != ")":
                        raise Unsplittable("unbalanced ')'")
                    self.flush(words)
                    return
                if tok.text == "(":
                    if words or assigned or after_compound or in_loop_head:
                        raise Unsplittable("'(' after words: a function or an array")
                    self.compound(")")
                    after_compound = True
                    continue
                self.flush(words)
                words = []
                in_loop_head = after_compound = assigned = named = False
                continue
            if in_loop_head:
                in_loop_head = not (tok.kind == "word" and not tok.quoted and tok.text == "do")
                continue
            if after_compound:
                if tok.kind != "redir":
                    raise Unsplittable("words after a group or subshell")
                continue  # its redirections apply to the group, whose commands are checked
            at_start = not words and not assigned and tok.kind == "word" and not tok.quoted
            if at_start and tok.text in _SKIPPED:
                continue
            if at_start and tok.text in _LOOPS:
                in_loop_head = True
                continue
            if at_start and (tok.text in _REFUSED or tok.text.startswith("((")):
                raise Unsplittable(f"{tok.text!r} is not split")
            if at_start and tok.text == "{":
                self.compound("}")
                after_compound = True
                continue
            if at_start and tok.text == "}":
                if close != "}":
                    raise Unsplittable("unbalanced '}'")
                return
            if tok.assignment and not named:
                assigned = True
                continue
            named |= tok.kind == "word"
            words.append(tok)

    def compound(self, close: str) -> None:
        if self.depth + 1 > MAX_DEPTH:
            raise Unsplittable("nested too deep")
        self.depth += 1
        self.parse_list(close)
        self.depth -= 1

    def flush(self, words: list[_Word]) -> None:
        args = [w for w in words if w.kind == "word"]
        redirs = [w.text for w in words if w.kind == "redir"]
        if not args and not redirs:
            return
        if len(self.out) >= MAX_COMMANDS:
            raise Unsplittable("too many commands")
        dynamic = bool(args) and args[0].dynamic
        texts = [w.text for w in args]
        literal = not any(w.dynamic for w in args)
        self.out.append(Command(" ".join(texts + redirs), dynamic, " ".join(texts), literal,
                                tuple(texts)))
        if dynamic or not texts:
            return
        name = texts[0].rsplit("/", 1)[-1]
        if name in _SHELLS:
            inner = _dash_c(texts[1:])
            if inner is not None:
                self.nested(inner)
        elif name == "eval" and len(texts) > 1:
            self.nested(" ".join(texts[1:]))

    # --- tokens ----------------------------------------------------------------------

    def next_token(self) -> _Word:
        s, n = self.s, len(self.s)
        while self.i < n:
            c = s[self.i]
            if c in " \t":
                self.i += 1
            elif s.startswith("\\\n", self.i):
                self.i += 2
            elif c == "#":
                end = s.find("\n", self.i)
                self.i = n if end < 0 else end
            else:
                break
        if self.i >= n:
            return _Word("eof", "")
        c = s[self.i]
        if c == "\n":
            self.i += 1
            self.read_heredocs()
            return _Word("op", "\n")
        if s.startswith(("<(", ">("), self.i):
            raise Unsplittable("process substitution")
        if c in "<>" or s.startswith("&>", self.i):
            return self.redirection("")
        if c in "()":
            if s.startswith("((", self.i):
                raise Unsplittable("arithmetic '(('")
            self.i += 1
            return _Word("op", c)
        if c in ";&|":
            if s.startswith((";;", ";&"), self.i):
                raise Unsplittable("a case branch")
            op = next(o for o in _OPERATORS if s.startswith(o, self.i))
            self.i += len(op)
            return _Word("op", op)
        start = self.i
        word = self.read_word()
        if word.text.isdigit() and not word.quoted and self.i < n and s[self.i] in "<>":
            return self.redirection(word.text)  # `2>file`: the descriptor is the operator's
        assignment = _ASSIGNMENT.match(s, start) is not None
        return word._replace(assignment=assignment)

    def redirection(self, fd: str) -> _Word:
        op = next(o for o in _REDIRECTIONS if self.s.startswith(o, self.i))
        self.i += len(op)
        if op in ("<&", ">&") and (dup := _FD_DUP.match(self.s, self.i)):
            self.i = dup.end()
            return _Word("redir", fd + op + dup.group())
        target = self.next_token()
        if target.kind != "word":
            raise Unsplittable(f"{op!r} without a target")
        if op in ("<<", "<<-"):
            self.heredocs.append((target.text, op == "<<-", target.quoted))
        return _Word("redir", f"{fd}{op} {target.text}")

    def read_heredocs(self) -> None:
        for delimiter, strip_tabs, quoted in self.heredocs:
            while True:
                if self.i >= len(self.s):
                    raise Unsplittable(f"heredoc {delimiter!r} never ends")
                end = self.s.find("\n", self.i)
                end = len(self.s) if end < 0 else end
                line = self.s[self.i : end]
                self.i = end + 1
                if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                    break
                if not quoted and ("$(" in line or "`" in line):
                    raise Unsplittable("a command substitution in a heredoc")
        self.heredocs = []

    def read_word(self) -> _Word:
        s, n = self.s, len(self.s)
        parts: list[str] = []
        quoted = dynamic = False
        brackets = braces = False  # an unquoted `[` or `{` seen: a glob or a brace may follow
        while self.i < n and s[self.i] not in _WORD_END:
            c = s[self.i]
            if c == "\\":
                if s.startswith("\\\n", self.i):
                    self.i += 2
                    continue
                parts.append(s[self.i + 1 : self.i + 2])
                self.i += 2
                quoted = True
            elif c == "'":
                end = s.find("'", self.i + 1)
                if end < 0:
                    raise Unsplittable("unbalanced single quote")
                parts.append(s[self.i + 1 : end])
                self.i = end + 1
                quoted = True
            elif c == '"':
                dynamic |= self.read_double_quoted(parts)
                quoted = True
            elif c in "$`":
                dynamic |= self.read_expansion(parts)
            else:
                dynamic |= c in "*?" or (c == "]" and brackets) or (c == "}" and braces)
                brackets |= c == "["
                braces |= c == "{"
                parts.append(c)
                self.i += 1
        return _Word("word", "".join(parts), quoted, dynamic)

    def read_double_quoted(self, parts: list[str]) -> bool:
        s, n = self.s, len(self.s)
        self.i += 1
        dynamic = False
        while self.i < n and s[self.i] != '"':
            c = s[self.i]
            if c == "\\" and s[self.i + 1 : self.i + 2] in ("$", "`", '"', "\\", "\n"):
                parts.append(s[self.i + 1].replace("\n", ""))
                self.i += 2
            elif c in "$`":
                dynamic |= self.read_expansion(parts)
            else:
                parts.append(c)
                self.i += 1
        if self.i >= n:
            raise Unsplittable("unbalanced double quote")
        self.i += 1
        return dynamic

    def read_expansion(self, parts: list[str]) -> bool:
        """An expansion at ``$`` or a backtick, kept as written; False for a lone ``$``."""
        s, start = self.s, self.i
        if s[start] == "`":
            end = start + 1
            while end < len(s) and s[end] != "`":
                end += 2 if s[end] == "\\" else 1
            if end >= len(s):
                raise Unsplittable("unbalanced backtick")
            self.nested(_BACKTICK_ESCAPE.sub(r"\1", s[start + 1 : end]))
            self.i = end + 1
        elif s.startswith("$((", start):
            raise Unsplittable("arithmetic '$(('")
        elif s.startswith("$(", start):
            self.i += 2
            self.compound(")")
        elif s.startswith("${", start):
            self.i += 2
            self.read_braced()
        elif s.startswith("$'", start):
            end = start + 2
            while end < len(s) and s[end] != "'":
                end += 2 if s[end] == "\\" else 1
            if end >= len(s):
                raise Unsplittable("unbalanced $'")
            self.i = end + 1
        elif s.startswith('$"', start):
            self.i += 1
            self.read_double_quoted([])
        elif m := _PARAMETER.match(s, start):
            self.i = m.end()
        else:
            parts.append("$")
            self.i += 1
            return False
        parts.append(s[start : self.i])
        return True

    def read_braced(self) -> None:
        """The rest of a ``${...}``, through its substitutions and quotes."""
        if self.depth + 1 > MAX_DEPTH:
            raise Unsplittable("nested too deep")
        self.depth += 1
        s, level = self.s, 1
        while self.i < len(s):
            c = s[self.i]
            if c == "}":
                level -= 1
                self.i += 1
                if level == 0:
                    self.depth -= 1
                    return
            elif c == "{":
                level += 1
                self.i += 1
            elif c == "\\":
                self.i += 2
            elif c == "'":
                end = s.find("'", self.i + 1)
                if end < 0:
                    raise Unsplittable("unbalanced single quote")
                self.i = end + 1
            elif c == '"':
                self.read_double_quoted([])
            elif c in "$`":
                self.read_expansion([])
            else:
                self.i += 1
        raise Unsplittable("unbalanced '${'")


def _dash_c(args: list[str]) -> str | None:
    """The command string of ``sh [options] -c STRING ...``, or None without ``-c``."""
    has_c, k = False, 0
    while k < len(args):
        arg = args[k]
        if arg in ("--", "-"):
            k += 1
            break
        if len(arg) < 2 or arg[0] not in "-+":
            break
        if arg in ("-o", "+o", "-O", "+O"):
            k += 2
            continue
        has_c |= arg[0] == "-" and not arg.startswith("--") and "c" in arg[1:]
        k += 1
    return args[k] if has_c and k < len(args) else None
