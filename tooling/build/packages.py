"""The sandbox's package index: micropip and the extra packages a build is asked for.

``pyharness build --package/--requirements/--wheels`` name Python packages the sandbox's
micropip may install. pip resolves them (dependencies included) for Pyodide 314; every
wheel must run there (pure Python, or built for ``pyemscripten_2026_0_wasm32``). The
wheels are copied unmodified into ``dist/pyodide/`` beside ``sandbox-lock.json``, a
Pyodide lock file written with the ``pyodide-lock`` library: micropip, the extras and
their dependencies. Nothing of it is loaded at boot.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.tags import Tag
from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
from packaging.version import InvalidVersion

from .wheels import (
    PYODIDE_PLATFORM,
    BuildError,
    Wheel,
    fetch_wheels,
    lock_entry,
    pip_download,
    sha256_of,
)

MICROPIP = Wheel("micropip", "0.11.1", "micropip-0.11.1-py3-none-any.whl",
                 "768de165adb8e66906039d8fec4127a57f522dfdf8e6fbff877a4616941ecfd3",
                 ("micropip",))
SANDBOX_LOCK = "sandbox-lock.json"
RUNTIME = "Pyodide 314"
PYTHON_MINOR = 14  # CPython 3.14
NEEDS = (f"it needs a pure-Python wheel (py3-none-any) or one built for {PYODIDE_PLATFORM}")


@dataclass(frozen=True)
class PackageRequest:
    """What the build was asked to add: requirement strings (``--package``), pip
    requirements files (``--requirements``) and directories of wheels (``--wheels``)."""

    packages: tuple[str, ...] = ()
    requirements: tuple[Path, ...] = ()
    wheel_dirs: tuple[Path, ...] = ()

    def requested(self) -> list[str]:
        """The extras as the user named them: requirement strings, then the requirements
        files' lines, then the file names of the wheels in the directories."""
        lines = [line for path in self.requirements for line in _requirement_lines(path)]
        wheels = [p.name for d in self.wheel_dirs for p in _wheels_in(d)]
        return [*self.packages, *lines, *wheels]


def refusal(file_name: str) -> str | None:
    """Why a wheel of this name cannot run in Pyodide 314, or None when it can."""
    try:
        tags = parse_wheel_filename(file_name)[3]
    except (InvalidWheelFilename, InvalidVersion):
        return f"{file_name} is not a valid wheel file name; {NEEDS}"
    if any(_runs_in_pyodide(tag) for tag in tags):
        return None
    platforms = sorted({t.platform for t in tags} - {"any", PYODIDE_PLATFORM})
    if platforms:
        return f"it is built for {', '.join(platforms)}; {NEEDS}"
    return (f"its tags {', '.join(sorted(map(str, tags)))} are not for CPython 3.{PYTHON_MINOR};"
            f" {NEEDS}")


def _runs_in_pyodide(tag: Tag) -> bool:
    if tag.abi == "none" and tag.platform == "any":
        match = re.fullmatch(r"py3(\d*)", tag.interpreter)
        return match is not None and (not match[1] or int(match[1]) <= PYTHON_MINOR)
    if tag.platform != PYODIDE_PLATFORM:
        return False
    if tag.abi == "abi3":
        match = re.fullmatch(r"cp3(\d+)", tag.interpreter)
        return match is not None and int(match[1]) <= PYTHON_MINOR
    return tag.interpreter == tag.abi == f"cp3{PYTHON_MINOR}"


def check_wheel(path: Path, where: str) -> None:
    """Raise :class:`BuildError` naming the wheel when it cannot run in Pyodide 314."""
    why = refusal(path.name)
    if why is not None:
        raise BuildError(f"wheel {path.name} ({where}) cannot run in {RUNTIME}: {why}")


def sandbox_wheels(request: PackageRequest, cache: Path, offline: bool = False,
                   pinned: Sequence[Wheel] = (MICROPIP,)) -> list[Path]:
    """Every wheel of the sandbox's index: the pinned ones (micropip) from ``cache``, the
    ``--wheels`` files, and what pip resolves for the request (kept in ``cache/packages``).
    """
    local = _local_wheels(request.wheel_dirs)
    for path in request.requirements:
        if not path.is_file():
            raise BuildError(f"requirements file {path} does not exist")
    for spec in request.packages:
        try:
            Requirement(spec)
        except InvalidRequirement as exc:
            raise BuildError(f"--package {spec!r} is not a requirement ({exc}); "
                             "write it as NAME==VERSION") from None
    resolved = _resolve(request, local, cache / "packages", offline)
    for path in resolved:
        check_wheel(path, "resolved by pip")
    unique: dict[str, Path] = {}
    for path in [*fetch_wheels(cache, offline, wheels=pinned).values(), *local, *resolved]:
        name = canonicalize_name(parse_wheel_filename(path.name)[0])
        other = unique.setdefault(name, path)
        if other.name != path.name:
            raise BuildError(f"two wheels of {name} for the sandbox: {other} and {path}; "
                             "keep one")
    return list(unique.values())


def _local_wheels(dirs: Sequence[Path]) -> list[Path]:
    """The ``--wheels`` files, each checked before pip runs."""
    wheels: list[Path] = []
    for folder in dirs:
        if not folder.is_dir():
            raise BuildError(f"--wheels {folder} is not a directory")
        found = _wheels_in(folder)
        if not found:
            raise BuildError(f"--wheels {folder} holds no *.whl file")
        for path in found:
            check_wheel(path, f"in {folder}")
        wheels += found
    return wheels


def _wheels_in(folder: Path) -> list[Path]:
    return sorted(p.resolve() for p in folder.glob("*.whl") if p.is_file())


def _resolve(request: PackageRequest, local: list[Path], cache: Path,
             offline: bool) -> list[Path]:
    """pip's resolution of the request, local wheels' dependencies included.

    A resolution is kept under a key of everything it depends on, so the next build with
    the same request needs no network (an unpinned requirement stays as first resolved
    until ``cache`` is deleted)."""
    if not request.packages and not request.requirements and not local:
        return []
    key = _request_key(request, local)
    done = cache / key
    if done.is_dir():
        return _wheels_in(done)
    if offline:
        if not request.packages and not request.requirements:
            return []  # local wheels alone: the lock still checks their dependencies
        raise BuildError(f"the sandbox packages {request.requested()} are not in the wheel "
                         f"cache {cache}; build once without --offline")
    cache.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".download-", dir=cache))
    try:
        options = [arg for d in request.wheel_dirs for arg in ("--find-links", str(d))]
        options += [arg for f in request.requirements for arg in ("-r", str(f))]
        try:
            pip_download([*request.packages, *map(str, local)], scratch,
                         platform=PYODIDE_PLATFORM, deps=True, options=options)
        except BuildError as exc:
            raise BuildError(f"resolving the sandbox packages for {RUNTIME} failed; each "
                             f"needs a py3-none-any or {PYODIDE_PLATFORM} wheel on PyPI or in "
                             f"a --wheels directory. {exc}") from None
        scratch.rename(done)  # only a complete resolution ever has its key's name
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return _wheels_in(done)


def _request_key(request: PackageRequest, local: list[Path]) -> str:
    # A requirements file that includes another (-r) is keyed by its own text only.
    parts = {"platform": PYODIDE_PLATFORM, "packages": list(request.packages),
             "requirements": [p.read_text() for p in request.requirements],
             "find_links": [str(d.resolve()) for d in request.wheel_dirs],
             "wheels": [[p.name, sha256_of(p)] for p in local]}
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:20]


def _requirement_lines(path: Path) -> list[str]:
    """The requirements of a pip requirements file, without comments and options."""
    lines = (line.split(" #")[0].strip() for line in path.read_text().splitlines())
    return [line for line in lines if line and not line.startswith(("#", "-"))]


def write_index(dest: Path, wheels: Sequence[Path], info: Mapping[str, Any],
                served: Mapping[str, str]) -> dict[str, dict[str, Any]]:
    """Copy ``wheels`` into ``dest`` and write ``dest/sandbox-lock.json``; return its
    packages.

    ``info`` is the upstream lock's (written as it is). A wheel whose file name is in
    ``dest`` already must be the harness's own pinned copy (``served``: file name to the
    sha256 of the original): the sandbox then shares the served file, and the lock has
    the served file's hash (that copy is precompiled to bytecode, which runs the same).
    """
    from pyodide_lock import PyodideLockSpec
    from pyodide_lock.spec import InfoSpec
    from pyodide_lock.utils import add_wheels_to_spec

    # pyodide-lock checks a binary wheel's platform tag against info.platform + "_" +
    # info.arch; Pyodide 314's lock says "emscripten_5_0_3" while its wheels are tagged
    # pyemscripten_2026_0_wasm32. refusal() has checked the tags, so give pyodide-lock the
    # wheels' platform. Its markers then see sys_platform "pyemscripten", as pip (which
    # evaluates markers for this machine) did not see "emscripten" either.
    target = InfoSpec(arch=info["arch"], python=info["python"],
                      platform=PYODIDE_PLATFORM.removesuffix("_" + info["arch"]),
                      abi_version=info.get("abi_version"),
                      version=str(info.get("version", "")))  # pyodide-lock 0.1 needs it
    with tempfile.TemporaryDirectory(prefix="pyharness-index-") as tmp:
        staged = Path(tmp)
        for path in wheels:
            shutil.copyfile(path, staged / path.name)
        try:
            spec = add_wheels_to_spec(PyodideLockSpec(info=target, packages={}),
                                      [staged / p.name for p in wheels], base_path=staged,
                                      ignore_missing_dependencies=True)
        except (RuntimeError, ValueError) as exc:
            raise BuildError(f"writing the sandbox's lock file failed: {exc}") from None
        _check_dependencies(spec.packages)
        packages: dict[str, dict[str, Any]] = {}
        for name, pkg in sorted(spec.packages.items()):
            target_file = dest / pkg.file_name
            if not target_file.exists():
                shutil.copyfile(staged / pkg.file_name, target_file)
            elif served.get(pkg.file_name) != pkg.sha256:
                raise BuildError(f"the sandbox's wheel {pkg.file_name} differs from the "
                                 "harness's file of that name in the bundle; use the "
                                 "harness's pinned version or rename the package")
            packages[name] = lock_entry(name, pkg.version, pkg.file_name,
                                        sha256_of(target_file), pkg.imports or (),
                                        pkg.depends)
    lock = {"info": dict(info), "packages": packages}
    (dest / SANDBOX_LOCK).write_text(json.dumps(lock, indent=1, sort_keys=True))
    return packages


def _check_dependencies(packages: Mapping[str, Any]) -> None:
    missing = sorted(f"{name} {pkg.version} needs {dep}"
                     for name, pkg in packages.items() for dep in pkg.depends
                     if dep not in packages)
    if missing:
        raise BuildError("the sandbox's packages miss dependencies: " + "; ".join(missing)
                         + ". Add them with --package NAME==VERSION or put their wheels in "
                         "a --wheels directory")


def manifest_fields(packages: Mapping[str, Mapping[str, Any]], dest: Path,
                    requested: Sequence[str]) -> dict[str, Any]:
    """What manifest.json says of the sandbox's index (``dest`` is dist/pyodide/)."""
    def entry(pkg: Mapping[str, Any]) -> dict[str, Any]:
        return {"name": pkg["name"], "version": pkg["version"],
                "file": f"pyodide/{pkg['file_name']}", "sha256": pkg["sha256"],
                "bytes": (dest / pkg["file_name"]).stat().st_size}

    micropip = entry(packages[MICROPIP.name])
    return {"packages": [entry(packages[n]) for n in sorted(packages) if n != MICROPIP.name],
            "micropip": {k: micropip[k] for k in ("version", "file", "bytes")},
            "requested": list(requested)}
