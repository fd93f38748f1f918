"""``pip`` in the sandbox: micropip over the bundle's package index, and the indexes the
page allows.

This module runs **inside the sandbox** (shell/sandbox.mjs writes it to
``/lib/pyharness`` with a ``pip`` package whose ``__main__`` calls :func:`main`, so
``pip``, ``pip3`` and ``python3 -m pip`` are the same). Packages come from two places:

- the bundle's own index (``pyharness build --package ...``): the sandbox's Pyodide lock
  file lists them, and their wheels come from the page's origin through the harness
  (the sandbox cannot fetch);
- the package indexes the page allows (``createHarness({packages: {indexUrls}})``),
  asked only for what the bundle does not have, through the page's network rules.

micropip itself (from PyPI, shipped in the bundle) is loaded on the first ``import
micropip``: nothing of it is paid for by a sandbox that installs nothing. What is
installed is reported to the harness after each command (:func:`installed`), which
installs it again in the next sandbox (:func:`restore`): a sandbox lives for one run.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.abc
import importlib.machinery
import importlib.metadata
import io
import json
import re
import sys
from collections.abc import Sequence
from typing import Any

USAGE = """Usage:
  pip install [--no-deps] [-q] <package> [<package> ...]
  pip install -r <requirements file>
  pip uninstall [-y] <package> [<package> ...]
  pip list
  pip show <package> [<package> ...]
  pip freeze

Packages come from this page's package index (what the bundle ships) and from the
indexes the page allows; nothing else is reachable."""

# What the harness tells before each command (configure): the indexes the page allows and
# the packages the bundle ships, [name, version] each.
CONFIG: dict[str, Any] = {"indexUrls": [], "available": []}
_REQUIREMENT_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


class PipError(Exception):
    """A failure the model can act on: the message says what and why."""


def configure(config_json: str) -> None:
    config = json.loads(config_json)
    CONFIG["indexUrls"] = [str(u) for u in config.get("indexUrls") or []]
    CONFIG["available"] = [(str(n), str(v)) for n, v in config.get("available") or []]


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


# ---------------------------------------------------------------------------
# micropip, loaded on first use


_LOAD_ERRORS: list[str] = []  # why micropip's last load failed


class _MicropipFinder(importlib.abc.MetaPathFinder):
    """Loads micropip's wheel (from the bundle) the first time it is imported."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != "micropip":
            return None
        try:
            import pyodide_js  # type: ignore[import-not-found]
            from pyodide.ffi import run_sync  # type: ignore[import-not-found]
        except ImportError:  # CPython (tests): whatever is installed there
            return None
        if not hasattr(pyodide_js.loadedPackages, "micropip"):
            _LOAD_ERRORS.clear()
            try:  # loadPackage reports a failed download to errorCallback, not by raising
                from pyodide.ffi import to_js

                options = to_js({"errorCallback": _LOAD_ERRORS.append,
                                 "messageCallback": lambda _m: None},
                                dict_converter=__import__("js").Object.fromEntries)
                run_sync(pyodide_js.loadPackage("micropip", options))
            except Exception as exc:  # refused: the import fails below, saying why
                _LOAD_ERRORS.append(str(exc))
        importlib.invalidate_caches()
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                return spec
        return None


def install_finder() -> None:
    if not any(isinstance(f, _MicropipFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _MicropipFinder())


def _micropip() -> Any:
    try:
        import micropip  # type: ignore[import-not-found]
    except ImportError as exc:
        why = "; ".join(str(e) for e in _LOAD_ERRORS) or str(exc)
        raise PipError(f"micropip could not be loaded from the bundle ({why})") from None
    return micropip


def _await(awaitable: Any) -> Any:
    try:
        from pyodide.ffi import run_sync
    except ImportError:  # CPython (tests)
        import asyncio

        return asyncio.run(awaitable)
    return run_sync(awaitable)


# ---------------------------------------------------------------------------
# What is installed


def distributions() -> dict[str, tuple[str, str]]:
    """Installed distributions: canonical name → (name as published, version); micropip
    (our own tool) is not one of the model's."""
    found: dict[str, tuple[str, str]] = {}
    for dist in importlib.metadata.distributions():
        name = dist.metadata["Name"]
        if name and canonical(name) != "micropip":
            found.setdefault(canonical(name), (name, dist.version))
    return found


def installed() -> str:
    """JSON: ``["name==version", ...]`` of what is installed, for the harness to carry to
    the next sandbox; ``[]`` when micropip never ran (nothing can be installed then)."""
    if "micropip" not in sys.modules:
        return "[]"
    return json.dumps(sorted(f"{name}=={version}" for name, version in distributions().values()))


def restore(requirements_json: str) -> str:
    """Install again what an earlier sandbox had (``["name==version", ...]``); returns a
    note for the command's stderr when something could not be ("" when all came back)."""
    wanted = [str(r) for r in json.loads(requirements_json)]
    have = distributions()
    missing = [r for r in wanted if canonical(r.split("==")[0]) not in have]
    if not missing:
        return ""
    try:
        _install(missing, deps=False)
    except PipError as exc:
        return f"pip: the packages installed earlier could not all be installed again: {exc}\n"
    return ""


# ---------------------------------------------------------------------------
# The commands


def main(argv: Sequence[str]) -> int:
    args = list(argv)
    if not args or args[0] in ("-h", "--help", "help"):
        print(USAGE)
        return 0 if args else 1
    if args[0] in ("-V", "--version"):
        print(f"pip (micropip, in the pyharness sandbox; Python {sys.version.split()[0]})")
        return 0
    command, rest = args[0], args[1:]
    handlers = {"install": _cmd_install, "uninstall": _cmd_uninstall, "list": _cmd_list,
                "show": _cmd_show, "freeze": _cmd_freeze}
    handler = handlers.get(command)
    if handler is None:
        print(f"ERROR: unknown command \"{command}\"\n\n{USAGE}", file=sys.stderr)
        return 2
    try:
        return handler(rest)
    except PipError as exc:
        print(f"ERROR: {exc}", file=sys.stderr)
        return 1


def _cmd_install(args: list[str]) -> int:
    requirements: list[str] = []
    deps, quiet = True, False
    it = iter(args)
    for arg in it:
        if arg in ("-r", "--requirement"):
            path = next(it, None)
            if path is None:
                raise PipError("-r needs a requirements file")
            requirements += _read_requirements(path)
        elif arg.startswith("--requirement="):
            requirements += _read_requirements(arg.split("=", 1)[1])
        elif arg == "--no-deps":
            deps = False
        elif arg in ("-q", "--quiet"):
            quiet = True
        elif arg in ("-U", "--upgrade", "--user", "--no-cache-dir", "--disable-pip-version-check"):
            pass  # nothing to do here: every install is fresh, for this sandbox
        elif arg in ("-i", "--index-url", "--extra-index-url") or arg.startswith("--index-url="):
            raise PipError("the package indexes are the page's to choose "
                           "(createHarness({packages: {indexUrls}})); this option is refused")
        elif arg.startswith("-"):
            raise PipError(f"no such option: {arg}")
        else:
            requirements.append(arg)
    if not requirements:
        raise PipError("You must give at least one requirement to install (see \"pip help\")")
    before = distributions()
    if not quiet:
        for req in requirements:
            print(f"Collecting {req}")
    _install(requirements, deps=deps)
    after = distributions()
    new = sorted(f"{name}-{version}" for key, (name, version) in after.items()
                 if before.get(key) != (name, version))
    if new:
        print("Successfully installed " + " ".join(new))
    else:
        for req in requirements:
            print(f"Requirement already satisfied: {req}")
    return 0


def _install(requirements: list[str], deps: bool) -> None:
    """The bundle's index first (offline: wheels from the page's origin), then the
    allowed indexes; a clear :class:`PipError` when neither has it."""
    micropip = _micropip()
    try:
        _quietly(micropip.install(requirements, deps=deps, index_urls=[]))
        return
    except ValueError as exc:
        local = exc
    except Exception as exc:  # a download that broke, a wheel that failed to unpack
        raise PipError(_explain(_message(exc), requirements)) from None
    indexes = [u for u in CONFIG["indexUrls"] if not _is_lock(u)]
    locks = [u for u in CONFIG["indexUrls"] if _is_lock(u)]
    if not indexes and not locks:
        raise PipError(_explain(_message(local), requirements))
    try:
        for lock in locks:  # a Pyodide distribution the page trusts (numpy, pandas, ...)
            urls = _from_lock(lock, requirements, deps)
            if urls is not None:
                if urls:
                    _quietly(micropip.install(urls, deps=False))
                return
        if not indexes:
            raise ValueError(f"Can't fetch metadata for {', '.join(requirements)}")
        _quietly(micropip.install(requirements, deps=deps, index_urls=indexes))
    except Exception as exc:
        raise PipError(_explain(_message(exc), requirements, remote=True)) from None


def _is_lock(url: str) -> bool:
    """An index URL that names a Pyodide lock file (a distribution's pyodide-lock.json)."""
    return url.split("?", 1)[0].endswith(".json")


def _from_lock(lock_url: str, requirements: list[str], deps: bool) -> list[str] | None:
    """The wheel URLs that install ``requirements`` from the Pyodide distribution whose
    lock file is at ``lock_url`` (dependencies first, what is installed left out), or
    None when it does not have them all. Only ``NAME`` and ``NAME==VERSION``."""
    from pyodide.http import pyfetch  # type: ignore[import-not-found]  # the page decides

    async def load() -> Any:
        response = await pyfetch(lock_url)
        response.raise_for_status()
        return await response.json()

    lock = _await(load())
    packages = {canonical(name): spec for name, spec in (lock.get("packages") or {}).items()}
    have = distributions()
    order: list[str] = []

    def visit(name: str) -> bool:
        spec = packages.get(canonical(name))
        if spec is None:
            return False
        if canonical(name) in have or spec["file_name"] in order:
            return True
        if deps:
            for dep in spec.get("depends") or []:
                if not visit(dep):
                    raise ValueError(f"{lock_url} lists {name}, but not its dependency {dep}")
        order.append(spec["file_name"])
        return True

    for requirement in requirements:
        name, _, version = requirement.partition("==")
        spec = packages.get(canonical(name.strip()))
        if spec is None or (version and spec.get("version") != version.strip()):
            return None
        visit(name.strip())
    base = lock_url.rsplit("/", 1)[0] + "/"
    return [file if "://" in file else base + file for file in order]


def _quietly(awaitable: Any) -> None:
    """Await micropip without its log on stderr (it prints each failure's traceback):
    the model gets one message that says why."""
    with contextlib.redirect_stderr(io.StringIO()):
        _await(awaitable)


def _message(exc: BaseException) -> str:
    """The exception's first line and its causes' (micropip wraps the page's refusal in
    a "Can't fetch wheel" with a guess about CORS)."""
    parts: list[str] = []
    at: BaseException | None = exc
    while at is not None and len(parts) < 4:
        text = str(at).strip().splitlines()[0] if str(at).strip() else type(at).__name__
        parts.append(text.split(" One common reason")[0].rstrip(". "))
        at = at.__cause__
    return ": ".join(parts)


def _explain(message: str, requirements: list[str], remote: bool = False) -> str:
    """micropip's message, with what the model needs to act on it."""
    available = CONFIG["available"]
    shipped = ", ".join(f"{n} {v}" for n, v in available) if available else "none"
    names = {canonical(n): v for n, v in available}
    unknown = [r for r in requirements if _name(r) and canonical(_name(r)) not in names]
    first = message.strip().splitlines()[0] if message.strip() else "the install failed"
    if "Can't find a pure Python 3 wheel" in message:
        why = f"{first} (only pure-Python wheels and wheels built for Pyodide 314 can run here)"
    elif "Can't fetch metadata" in message or "not found" in message.lower():
        missing = ", ".join(unknown) if unknown else ", ".join(requirements)
        why = f"No matching distribution found for {missing}: not in this page's package index"
        if not remote and not CONFIG["indexUrls"]:
            why += (" and the page allows no other index (createHarness({packages: "
                    "{indexUrls}}))")
        elif remote:
            why += f", nor in the allowed index(es) {', '.join(CONFIG['indexUrls'])}"
    else:
        why = first
    return f"{why}. Packages this page ships: {shipped}."


def _name(requirement: str) -> str:
    match = _REQUIREMENT_NAME.match(requirement)
    return match.group(1) if match else ""


def _read_requirements(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as exc:
        raise PipError(f"Could not open requirements file: {exc}") from None
    out: list[str] = []
    for line in lines:
        text = line.split(" #", 1)[0].strip()
        if not text or text.startswith("#"):
            continue
        if text.startswith("-"):
            raise PipError(f"{path}: the option {text.split()[0]} is not supported here")
        out.append(text)
    return out


def _cmd_uninstall(args: list[str]) -> int:
    names = [a for a in args if not a.startswith("-")]
    if not names:
        raise PipError("You must give at least one requirement to uninstall")
    have = distributions()
    gone = [n for n in names if canonical(n) not in have]
    for name in gone:
        print(f"WARNING: Skipping {name} as it is not installed.", file=sys.stderr)
    present = [have[canonical(n)] for n in names if canonical(n) in have]
    if present:
        micropip = _micropip()
        with contextlib.redirect_stderr(io.StringIO()):  # micropip logs each file it removes
            micropip.uninstall([name for name, _ in present])
        for name, version in present:
            print(f"Found existing installation: {name} {version}\n"
                  f"  Successfully uninstalled {name}-{version}")
    return 0


def _cmd_list(args: list[str]) -> int:
    rows = sorted(distributions().values(), key=lambda r: r[0].lower())
    width = max([len("Package"), *(len(n) for n, _ in rows)])
    vwidth = max([len("Version"), *(len(v) for _, v in rows)])
    print(f"{'Package':<{width}} {'Version':<{vwidth}}".rstrip())
    print(f"{'-' * width} {'-' * vwidth}")
    for name, version in rows:
        print(f"{name:<{width}} {version}")
    return 0


def _cmd_freeze(args: list[str]) -> int:
    for name, version in sorted(distributions().values(), key=lambda r: r[0].lower()):
        print(f"{name}=={version}")
    return 0


def _cmd_show(args: list[str]) -> int:
    names = [a for a in args if not a.startswith("-")]
    if not names:
        raise PipError("Please provide a package name or names.")
    have = distributions()
    missing = [n for n in names if canonical(n) not in have]
    first = True
    for name in names:
        if canonical(name) not in have:
            continue
        dist = importlib.metadata.distribution(have[canonical(name)][0])
        meta = dist.metadata
        if not first:
            print("---")
        first = False
        requires = sorted({_name(r) for r in dist.requires or [] if "extra ==" not in r})
        field = {key: (meta.get_all(key) or [""])[0] for key in ("Summary", "Home-page", "License")}
        print(f"Name: {meta['Name']}\nVersion: {dist.version}\n"
              f"Summary: {field['Summary']}\nHome-page: {field['Home-page']}\n"
              f"License: {field['License']}\nRequires: {', '.join(requires)}")
    if missing:
        print(f"WARNING: Package(s) not found: {', '.join(missing)}", file=sys.stderr)
        return 1
    return 0
