"""The sandbox's package index (tooling/build/packages.py): which wheels may go in, the
lock file and manifest fields it writes, and pip's resolution, all without network (pip
runs with PIP_NO_INDEX against local directories)."""

import base64
import hashlib
import json
import zipfile
from pathlib import Path

import pytest

from tooling.build import packages
from tooling.build.packages import (
    MICROPIP,
    PackageRequest,
    manifest_fields,
    refusal,
    sandbox_wheels,
    write_index,
)
from tooling.build.wheels import BuildError, Wheel, sha256_of
from tooling.cli import main

ROOT = Path(__file__).resolve().parents[1]
# Pyodide 314's own lock says this (node_modules/pyodide/pyodide-lock.json).
INFO = {"abi_version": "2026_0", "arch": "wasm32", "platform": "emscripten_5_0_3",
        "python": "3.14.2"}
MANYLINUX = "native-1.0-cp314-cp314-manylinux_2_17_x86_64.whl"


def make_wheel(folder: Path, name: str, version: str, tag: str = "py3-none-any",
               requires: tuple[str, ...] = ()) -> Path:
    """A small real wheel: one top-level package, METADATA, WHEEL and RECORD."""
    folder.mkdir(parents=True, exist_ok=True)
    stem = f"{name.replace('-', '_')}-{version}"
    info = f"{stem}.dist-info"
    files = {
        f"{name.replace('-', '_')}/__init__.py": f"VERSION = {version!r}\n",
        f"{info}/METADATA": "Metadata-Version: 2.1\n"
        f"Name: {name}\nVersion: {version}\n"
        + "".join(f"Requires-Dist: {r}\n" for r in requires),
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\n"
        f"Root-Is-Purelib: {'true' if tag.endswith('any') else 'false'}\nTag: {tag}\n",
    }
    record = ""
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest())
        record += f"{path},sha256={digest.rstrip(b'=').decode()},{len(text.encode())}\n"
    files[f"{info}/RECORD"] = record + f"{info}/RECORD,,\n"
    wheel = folder / f"{stem}-{tag}.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        for path, text in files.items():
            z.writestr(path, text)
    return wheel


def fake_micropip(cache: Path) -> Wheel:
    """A stand-in for the pinned micropip wheel, in the cache so nothing is downloaded."""
    path = make_wheel(cache, "micropip", MICROPIP.version)
    return Wheel("micropip", MICROPIP.version, path.name, sha256_of(path), ("micropip",))


@pytest.fixture
def pure(tmp_path: Path) -> Path:
    """A --wheels directory: pkg-a needs pkg-b, both pure Python."""
    folder = tmp_path / "wheels"
    make_wheel(folder, "pkg-a", "1.0", requires=("pkg-b>=1", "winonly; sys_platform == 'win32'"))
    make_wheel(folder, "pkg-b", "2.1")
    return folder


@pytest.fixture
def no_pip(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("pip ran")

    monkeypatch.setattr(packages, "pip_download", refuse)


@pytest.mark.parametrize(("file_name", "reason"), [
    ("a-1.0-py3-none-any.whl", None),
    ("a-1.0-py2.py3-none-any.whl", None),
    ("a-1.0-py314-none-any.whl", None),
    ("a-1.0-cp314-cp314-pyemscripten_2026_0_wasm32.whl", None),
    ("a-1.0-cp312-abi3-pyemscripten_2026_0_wasm32.whl", None),
    ("a-1.0-py315-none-any.whl", "are not for CPython 3.14"),
    ("a-1.0-py2-none-any.whl", "are not for CPython 3.14"),
    ("a-1.0-cp313-cp313-pyemscripten_2026_0_wasm32.whl", "are not for CPython 3.14"),
    ("a-1.0-cp314-cp314-pyodide_2025_0_wasm32.whl", "built for pyodide_2025_0_wasm32"),
    ("a-1.0-cp312-abi3-manylinux_2_17_x86_64.whl", "built for manylinux_2_17_x86_64"),
    ("a-1.0-cp314-cp314-win_amd64.whl", "built for win_amd64"),
    ("not-a-wheel.whl", "not a valid wheel file name"),
])
def test_which_wheels_run_in_pyodide(file_name, reason):
    why = refusal(file_name)
    if reason is None:
        assert why is None
    else:
        assert why is not None and reason in why
        assert "py3-none-any" in why and "pyemscripten_2026_0_wasm32" in why


def test_a_manylinux_wheel_is_refused_before_pip_runs(tmp_path, pure, no_pip):
    make_wheel(pure, "native", "1.0", tag="cp314-cp314-manylinux_2_17_x86_64")
    request = PackageRequest(packages=("pkg-a==1.0",), wheel_dirs=(pure,))
    with pytest.raises(BuildError) as info:
        sandbox_wheels(request, tmp_path / "cache", pinned=())
    message = str(info.value)
    assert f"wheel {MANYLINUX}" in message
    assert "cannot run in Pyodide 314: it is built for manylinux_2_17_x86_64" in message
    assert "pure-Python wheel (py3-none-any) or one built for pyemscripten_2026_0_wasm32" \
        in message


def test_the_index_lists_every_wheel_with_its_hash(tmp_path, pure, no_pip):
    cache, dest = tmp_path / "cache", tmp_path / "dist" / "pyodide"
    dest.mkdir(parents=True)
    micropip = fake_micropip(cache)
    request = PackageRequest(wheel_dirs=(pure,))
    # --wheels alone and --offline: no pip; the lock still checks the dependencies.
    wheels = sandbox_wheels(request, cache, offline=True, pinned=(micropip,))
    index = write_index(dest, wheels, INFO, served={})

    lock = json.loads((dest / "sandbox-lock.json").read_text())
    assert lock["info"] == INFO
    assert lock["packages"] == index
    assert sorted(index) == ["micropip", "pkg-a", "pkg-b"]
    assert index["pkg-a"]["depends"] == ["pkg-b"]  # the win32-only one is not
    assert index["pkg-a"]["imports"] == ["pkg_a"]
    for name, pkg in index.items():
        served = dest / pkg["file_name"]
        assert "/" not in pkg["file_name"], name
        assert pkg["sha256"] == sha256_of(served)
        original = cache / micropip.file_name if name == "micropip" else pure / served.name
        assert served.read_bytes() == original.read_bytes()  # unmodified

    fields = manifest_fields(index, dest, request.requested())
    assert fields["packages"] == [
        {"name": "pkg-a", "version": "1.0", "file": "pyodide/pkg_a-1.0-py3-none-any.whl",
         "sha256": index["pkg-a"]["sha256"],
         "bytes": (dest / "pkg_a-1.0-py3-none-any.whl").stat().st_size},
        {"name": "pkg-b", "version": "2.1", "file": "pyodide/pkg_b-2.1-py3-none-any.whl",
         "sha256": index["pkg-b"]["sha256"],
         "bytes": (dest / "pkg_b-2.1-py3-none-any.whl").stat().st_size},
    ]
    assert fields["micropip"] == {"version": "0.11.1", "file": f"pyodide/{micropip.file_name}",
                                  "bytes": (dest / micropip.file_name).stat().st_size}
    assert fields["requested"] == ["pkg_a-1.0-py3-none-any.whl", "pkg_b-2.1-py3-none-any.whl"]


def test_a_missing_dependency_names_it(tmp_path, no_pip):
    folder = tmp_path / "wheels"
    make_wheel(folder, "pkg-a", "1.0", requires=("pkg-b>=1",))
    wheels = sandbox_wheels(PackageRequest(wheel_dirs=(folder,)), tmp_path / "cache",
                            offline=True, pinned=())
    with pytest.raises(BuildError) as info:
        write_index(tmp_path, wheels, INFO, served={})
    assert "pkg-a 1.0 needs pkg-b" in str(info.value)
    assert "--package" in str(info.value) and "--wheels" in str(info.value)


def test_a_wasm_wheel_is_locked(tmp_path):
    # pyodide-lock matches a binary wheel's platform against the lock's info; Pyodide 314's
    # info.platform (emscripten_5_0_3) is not its wheels' tag, which write_index handles.
    wheel = make_wheel(tmp_path / "w", "native", "1.0",
                       tag="cp314-cp314-pyemscripten_2026_0_wasm32")
    index = write_index(tmp_path, [wheel], INFO, served={})
    assert index["native"]["file_name"] == wheel.name


def test_a_wheel_the_harness_ships_is_shared_only_when_identical(tmp_path):
    original = make_wheel(tmp_path / "w", "pkg-b", "2.1")
    dest = tmp_path / "dist"
    served = make_wheel(dest, "pkg-b", "2.1", requires=("x; python_version < '3'",))
    index = write_index(dest, [original], INFO, served={served.name: sha256_of(original)})
    assert index["pkg-b"]["sha256"] == sha256_of(served)  # the file as served
    with pytest.raises(BuildError) as info:
        write_index(dest, [original], INFO, served={})
    assert "pkg_b-2.1-py3-none-any.whl differs from the harness's file" in str(info.value)


def test_two_versions_of_one_package_are_refused(tmp_path, pure, no_pip):
    make_wheel(tmp_path / "more", "pkg-b", "3.0")
    request = PackageRequest(wheel_dirs=(pure, tmp_path / "more"))
    with pytest.raises(BuildError) as info:
        sandbox_wheels(request, tmp_path / "cache", offline=True, pinned=())
    assert "two wheels of pkg-b" in str(info.value)


def test_bad_options_fail_before_pip(tmp_path, no_pip):
    cases = [(PackageRequest(wheel_dirs=(tmp_path / "nope",)), "is not a directory"),
             (PackageRequest(wheel_dirs=(tmp_path,)), "holds no *.whl file"),
             (PackageRequest(requirements=(tmp_path / "r.txt",)), "does not exist"),
             (PackageRequest(packages=("tabulate=0.10",)), "write it as NAME==VERSION")]
    for request, message in cases:
        with pytest.raises(BuildError) as info:
            sandbox_wheels(request, tmp_path / "cache", pinned=())
        assert message in str(info.value)


# --- pip's resolution, offline: PIP_NO_INDEX and --wheels as --find-links -----------------

@pytest.fixture
def pip_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PIP_NO_INDEX", "1")


def test_pip_resolves_requirements_and_caches_them(tmp_path, pure, pip_offline):
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("# the sandbox's\npkg-a==1.0  # needs pkg-b\n")
    request = PackageRequest(requirements=(requirements,), wheel_dirs=(pure,))
    cache = tmp_path / "cache"
    first = sandbox_wheels(request, cache, pinned=())
    assert sorted(p.name for p in first) == ["pkg_a-1.0-py3-none-any.whl",
                                             "pkg_b-2.1-py3-none-any.whl"]
    (resolution,) = (cache / "packages").iterdir()
    assert sorted(p.name for p in resolution.iterdir()) == sorted(p.name for p in first)
    # The same request again needs no pip at all.
    assert sandbox_wheels(request, cache, offline=True, pinned=()) == first
    assert request.requested()[0] == "pkg-a==1.0"


def test_a_dependency_pip_cannot_find_is_a_clear_error(tmp_path, pip_offline):
    folder = tmp_path / "wheels"
    make_wheel(folder, "pkg-a", "1.0", requires=("pkg-b>=1",))
    request = PackageRequest(packages=("pkg-a==1.0",), wheel_dirs=(folder,))
    with pytest.raises(BuildError) as info:
        sandbox_wheels(request, tmp_path / "cache", pinned=())
    message = str(info.value)
    assert "resolving the sandbox packages for Pyodide 314 failed" in message
    assert "pkg-b" in message  # pip's own words, e.g. "No matching distribution found"
    assert not list((tmp_path / "cache" / "packages").iterdir())  # nothing half cached


# --- the real micropip, when an earlier build downloaded it; the CLI ------------------------

REAL_CACHE = ROOT / ".cache" / "wheels"


@pytest.mark.skipif(not (REAL_CACHE / MICROPIP.file_name).exists(),
                    reason="micropip is not in .cache/wheels (pyharness build downloads it)")
def test_the_real_micropip_is_locked(tmp_path, no_pip):
    wheels = sandbox_wheels(PackageRequest(), REAL_CACHE, offline=True)
    index = write_index(tmp_path, wheels, INFO, served={})
    assert index == {"micropip": {
        "name": "micropip", "version": "0.11.1", "file_name": MICROPIP.file_name,
        "sha256": MICROPIP.sha256, "imports": ["micropip"], "depends": [],
        "install_dir": "site", "package_type": "package", "unvendored_tests": False,
        "tool": {}}}
    assert manifest_fields(index, tmp_path, [])["packages"] == []


def test_build_help_documents_the_package_options(capsys):
    with pytest.raises(SystemExit):
        main(["build", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for option in ("--package NAME==VERSION", "--requirements FILE", "--wheels DIR"):
        assert option in text
    assert "repeatable" in text and "micropip" in text and "pyemscripten_2026_0_wasm32" in text
