"""The wheels the bundle ships, pinned by version and sha256, and how to get them.

Wheels come from PyPI through ``pip download`` into a cache directory; a wheel whose
hash differs from its pin fails the build. ``depends`` and ``imports`` feed the
generated Pyodide lock file.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PYODIDE_PLATFORM = "pyemscripten_2026_0_wasm32"


class BuildError(Exception):
    """The bundle cannot be built; the message says what is missing and how to fix it."""


@dataclass(frozen=True)
class Wheel:
    name: str  # the Pyodide package name, as in ``depends``
    version: str
    file_name: str
    sha256: str
    imports: tuple[str, ...]
    depends: tuple[str, ...] = ()
    platform: str | None = None  # None: a pure-Python wheel

    @property
    def requirement(self) -> str:
        return f"{self.name}=={self.version}"


WHEELS: tuple[Wheel, ...] = (
    Wheel("pydantic", "2.14.4", "pydantic-2.14.4-py3-none-any.whl",
          "653a2ad9f6d8858529c77c72717d0ea991d6c6837fe683246b2f4b2bbfc3fadc",
          ("pydantic",),
          ("pydantic-core", "annotated-types", "typing-extensions", "typing-inspection")),
    Wheel("pydantic-core", "2.50.5",
          "pydantic_core-2.50.5-cp314-cp314-pyemscripten_2026_0_wasm32.whl",
          "b2910ec0fa5aeb9bef70156f2b79f4783978fdcfaa7b2f1b5d1814458d2e79a1",
          ("pydantic_core",), ("typing-extensions",), platform=PYODIDE_PLATFORM),
    Wheel("annotated-types", "0.8.0", "annotated_types-0.8.0-py3-none-any.whl",
          "f072f4d804ea359e4eaf198b1af7a8b0943881a87f31bb764f8bf219bb9419e0",
          ("annotated_types",)),
    Wheel("typing-extensions", "4.16.0", "typing_extensions-4.16.0-py3-none-any.whl",
          "481caa481374e813c1b176ada14e97f1f67a4539ce9cfeb3f350d78d6370c2e8",
          ("typing_extensions",)),
    Wheel("typing-inspection", "0.4.5", "typing_inspection-0.4.5-py3-none-any.whl",
          "bc210535442b39e1bf2805e0c7a17dfd6a4ace760c84c7f7d16245d23a6b1c39",
          ("typing_inspection",), ("typing-extensions",)),
    Wheel("jsonschema", "4.17.3", "jsonschema-4.17.3-py3-none-any.whl",
          "a870ad254da1a8ca84b6a2905cac29d265f805acc57af304784962a2aa6508f6",
          ("jsonschema",), ("attrs", "pyrsistent")),
    Wheel("attrs", "26.1.0", "attrs-26.1.0-py3-none-any.whl",
          "c647aa4a12dfbad9333ca4e71fe62ddc36f4e63b2d260a37a8b83d2f043ac309",
          ("attr", "attrs")),
    Wheel("pyrsistent", "0.20.0", "pyrsistent-0.20.0-py3-none-any.whl",
          "c55acc4733aad6560a7f5f818466631f07efc001fd023f34a6c203f8b6df0f0b",
          ("pyrsistent",)),
)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def fetch_wheels(cache: Path, offline: bool = False,
                 wheels: Sequence[Wheel] = WHEELS) -> dict[str, Path]:
    """Return every pinned wheel (``WHEELS`` unless told) from ``cache``, downloading the
    missing ones with pip.

    Raises :class:`BuildError` on a wheel that is missing or whose hash differs.
    """
    cache.mkdir(parents=True, exist_ok=True)
    missing = [w for w in wheels if not (cache / w.file_name).exists()]
    if missing and not offline:
        pure = [w.requirement for w in missing if w.platform is None]
        if pure:
            pip_download(pure, cache)
        for wheel in missing:
            if wheel.platform is not None:
                pip_download([wheel.requirement], cache, platform=wheel.platform)
    found: dict[str, Path] = {}
    for wheel in wheels:
        path = cache / wheel.file_name
        if not path.exists():
            raise BuildError(
                f"wheel {wheel.file_name} is missing from {cache}; run `pyharness build` with "
                f"access to PyPI, or put the file there (sha256 {wheel.sha256})"
            )
        actual = sha256_of(path)
        if actual != wheel.sha256:
            raise BuildError(
                f"wheel {path} has sha256 {actual}, expected {wheel.sha256}; delete it and "
                "build again to download the pinned file"
            )
        found[wheel.name] = path
    return found


def pip_download(requirements: Sequence[str], dest: Path, *, platform: str | None = None,
                 deps: bool = False, options: Sequence[str] = ()) -> None:
    """``pip download`` binary wheels for CPython 3.14 into ``dest``: pure-Python ones, and
    with ``platform`` those built for it too; with ``deps``, their dependencies as well.
    ``options`` go before the requirements (``--find-links DIR``, ``-r FILE``)."""
    cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--only-binary=:all:",
           "--python-version", "3.14", "--dest", str(dest)]
    if not deps:
        cmd.append("--no-deps")
    if platform is not None:
        cmd += ["--implementation", "cp", "--abi", "cp314", "--platform", platform]
    cmd += [*options, *requirements]
    result = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise BuildError(f"pip download failed for {list(requirements)}:\n"
                         f"{result.stderr.strip()[-3000:]}")


def lock_entry(name: str, version: str, file_name: str, sha256: str,
               imports: Sequence[str], depends: Sequence[str]) -> dict[str, Any]:
    """One package of a ``pyodide-lock.json``, as Pyodide 314's own lock writes it."""
    return {"name": name, "version": version, "file_name": file_name, "sha256": sha256,
            "imports": list(imports), "depends": list(depends), "install_dir": "site",
            "package_type": "package", "unvendored_tests": False, "tool": {}}
