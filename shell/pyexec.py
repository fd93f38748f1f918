"""``python3`` in the shell: run a script or ``-c`` code in the sandbox's Python.

This module runs **inside the sandbox** (shell/sandbox.mjs loads its source into the
sandbox worker's own Pyodide, which holds nothing of the harness), so it imports only
the standard library. On CPython the tests import it directly.

Each invocation gets a fresh ``__main__`` namespace, its own ``sys.argv``, stdin,
captured stdout/stderr and working directory; the exit code comes from ``SystemExit``
or is 1 with a traceback on stderr for an uncaught exception.

A soft deadline is a trace function that checks the clock every few thousand lines
(exit 124): it stops pure-Python loops and keeps the sandbox alive. The hard deadline
is outside: the harness tears the whole sandbox down when a call overruns (a long call
into C, ``time.sleep``, a catastrophic regex).
"""

from __future__ import annotations

import ast
import contextlib
import inspect
import io
import json
import os
import posixpath
import runpy
import sys
import time
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from types import FrameType
from typing import Any

USAGE = "usage: python3 [-c cmd | -m mod | file | -] [arg] ..."
CHECK_EVERY = 4096  # trace events between clock checks


@dataclass(frozen=True)
class PyResult:
    stdout: str
    stderr: str
    exit_code: int


class _Capture(io.StringIO):
    """Captured output that a script may close (``json.tool`` closes stdout) without
    losing what it wrote."""

    def close(self) -> None:
        pass


class _Deadline(BaseException):
    """Raised inside the script when its time is up (BaseException: not caught by
    ``except Exception`` in the script)."""


# The shell's mounts: its virtual path → the directory it is in this Python. In the
# sandbox both are the same; the CPython tests map them onto temporary directories.
Mounts = dict[str, str]
SANDBOX_MOUNTS: Mounts = {"/work": "/work", "/tmp": "/tmp"}


def run_python_json(request_json: str) -> str:
    """The sandbox's entry: ``{args, cwd, stdin, timeoutMs}`` → ``{stdout, stderr,
    exitCode}``, both JSON."""
    request = json.loads(request_json)
    result = run_python([str(a) for a in request["args"]], str(request["stdin"]),
                        str(request["cwd"]), float(request["timeoutMs"]) / 1000,
                        SANDBOX_MOUNTS)
    return json.dumps({"stdout": result.stdout, "stderr": result.stderr,
                       "exitCode": result.exit_code})


def real_path(path: str, mounts: Mounts) -> str | None:
    """The real path of a shell path below a mount, or None elsewhere."""
    shown = posixpath.normpath("/" + path.lstrip("/"))
    for point, directory in mounts.items():
        if shown == point or shown.startswith(point + "/"):
            return directory + shown[len(point):]
    return None


def run_python(args: list[str], stdin: str, cwd: str, timeout_s: float,
               mounts: Mounts) -> PyResult:
    """Run ``python3 ARGS``; ``cwd`` is the shell's (virtual) working directory."""
    out, err = _Capture(), _Capture()
    try:
        target = _parse(args, stdin, cwd, mounts)
    except _Usage as exc:
        return PyResult("", f"python3: {exc}\n{USAGE}\n", 2)
    if target is None:
        return PyResult(f"Python {sys.version.split()[0]}\n", "", 0)
    kind, value, argv = target
    code = 0
    # The shell's virtual "/" has no real counterpart: start in /work then.
    real_cwd = real_path(cwd, mounts) or mounts["/work"]
    with _sandboxed_io(stdin, out, err, argv, real_cwd), _deadline(timeout_s):
        try:
            if kind == "module":
                runpy.run_module(value, run_name="__main__", alter_sys=True)
            else:
                # Top-level await (``await micropip.install("x")``) as in Pyodide's REPL.
                compiled = compile(value, argv[0] if kind == "file" else "<string>", "exec",
                                   flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
                namespace = {"__name__": "__main__", "__builtins__": __builtins__}
                if compiled.co_flags & inspect.CO_COROUTINE:
                    _run_coroutine(eval(compiled, namespace))
                else:
                    exec(compiled, namespace)
        except SystemExit as exc:
            code = _exit_code(exc, err)
        except _Deadline:
            err.write(f"python3: timed out after {timeout_s * 1000:.0f} ms\n")
            code = 124
        except BaseException as exc:  # the script's own failure: report it like python3 does
            tb = exc.__traceback__
            while tb is not None and tb.tb_frame.f_code.co_filename == _OWN_FILE:
                tb = tb.tb_next  # hide our frames: the traceback is the script's
            err.write("".join(traceback.format_exception(type(exc), exc, tb)))
            code = 1
    return PyResult(out.getvalue(), err.getvalue(), code)


def _run_coroutine(coroutine: Any) -> None:
    """Run a script with top-level await to its end: on the sandbox's event loop through
    JSPI (the shell calls python3 as a promising function), or asyncio on CPython."""
    try:
        from pyodide.ffi import run_sync  # type: ignore[import-not-found]
    except ImportError:
        import asyncio

        asyncio.run(coroutine)
        return

    async def capture() -> BaseException | None:
        try:
            await coroutine
        except BaseException as exc:  # raised again below, as the script raised it
            return exc
        return None

    # The script's own exception with its own traceback (not as it comes back through JS).
    failure = run_sync(capture())
    if failure is not None:
        raise failure


_OWN_FILE = _run_coroutine.__code__.co_filename


class _Usage(Exception):
    pass


def _parse(args: list[str], stdin: str, cwd: str,
           mounts: Mounts) -> tuple[str, str, list[str]] | None:
    if not args or args[0] == "-":
        return "code", stdin, ["-", *args[1:]]
    first = args[0]
    if first in ("-V", "--version"):
        return None
    if first == "-c":
        if len(args) < 2:
            raise _Usage("argument expected for the -c option")
        return "code", args[1], ["-c", *args[2:]]
    if first == "-m":
        if len(args) < 2:
            raise _Usage("argument expected for the -m option")
        return "module", args[1], [args[1], *args[2:]]
    if first.startswith("-"):
        raise _Usage(f"unsupported option {first}")
    path = first if first.startswith("/") else f"{cwd}/{first}"
    real = real_path(path, mounts)
    try:
        if real is None:
            raise OSError(path)
        with open(real, encoding="utf-8") as f:
            source = f.read()
    except OSError:
        raise _Usage(f"can't open file '{first}': [Errno 2] No such file or directory") from None
    return "file", source, [first, *args[1:]]


def _exit_code(exc: SystemExit, err: io.StringIO) -> int:
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code & 0xFF
    err.write(f"{exc.code}\n")
    return 1


@contextlib.contextmanager
def _sandboxed_io(stdin: str, out: io.StringIO, err: io.StringIO, argv: list[str],
                  cwd: str) -> Iterator[None]:
    saved = sys.argv, sys.stdin, os.getcwd()
    sys.argv = argv
    sys.stdin = io.StringIO(stdin)
    try:
        os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            yield
    finally:
        sys.argv, sys.stdin = saved[0], saved[1]
        with contextlib.suppress(OSError):
            os.chdir(saved[2])


@contextlib.contextmanager
def _deadline(timeout_s: float) -> Iterator[None]:
    end = time.monotonic() + timeout_s
    count = 0

    def trace(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal count
        count += 1
        if count % CHECK_EVERY == 0 and time.monotonic() > end:
            raise _Deadline
        return trace

    previous = sys.gettrace()
    sys.settrace(trace)
    try:
        yield
    finally:
        sys.settrace(previous)
