"""pip in the sandbox (shell/pyharness_pip.py) on CPython: its command line, its
messages and what the model is told. Installing needs micropip in a Pyodide, which the
in-browser rows cover (e2e/test_packages.py); here micropip is not there to call."""

import json
import sys
import types

import pytest

import pyharness_pip
from harness.config import PackagesPolicy, ShellConfig
from harness.prompt import packages_line


@pytest.fixture(autouse=True)
def config():
    pyharness_pip.configure(json.dumps({"indexUrls": [], "available": [["tabulate", "0.10.0"]]}))
    yield
    pyharness_pip.configure("{}")


def test_install_needs_a_requirement(capsys):
    assert pyharness_pip.main(["install"]) == 1
    assert "at least one requirement" in capsys.readouterr().err


def test_the_index_is_the_pages_to_choose(capsys):
    assert pyharness_pip.main(["install", "-i", "https://evil.example/simple", "x"]) == 1
    assert "packages: {indexUrls}" in capsys.readouterr().err


def test_unknown_command_and_help(capsys):
    assert pyharness_pip.main(["frobnicate"]) == 2
    assert "unknown command" in capsys.readouterr().err
    assert pyharness_pip.main(["help"]) == 0
    assert "pip install" in capsys.readouterr().out


def test_requirements_file(tmp_path):
    path = tmp_path / "requirements.txt"
    path.write_text("# tools\ntabulate==0.10.0  # tables\n\nrich\n", encoding="utf-8")
    assert pyharness_pip._read_requirements(str(path)) == ["tabulate==0.10.0", "rich"]
    path.write_text("--index-url https://x.example/\n", encoding="utf-8")
    with pytest.raises(pyharness_pip.PipError, match="not supported"):
        pyharness_pip._read_requirements(str(path))
    with pytest.raises(pyharness_pip.PipError, match="Could not open"):
        pyharness_pip._read_requirements(str(tmp_path / "missing.txt"))


def test_not_in_the_index_says_where_it_looked():
    why = pyharness_pip._explain("Can't fetch metadata for 'requests'.", ["requests"])
    assert why.startswith("No matching distribution found for requests: not in this page's "
                          "package index and the page allows no other index")
    assert why.endswith("Packages this page ships: tabulate 0.10.0.")
    pyharness_pip.configure(json.dumps({"indexUrls": ["https://pypi.example/simple"]}))
    why = pyharness_pip._explain("Can't fetch metadata for 'requests'.", ["requests"], True)
    assert "nor in the allowed index(es) https://pypi.example/simple" in why
    assert why.endswith("Packages this page ships: none.")


def test_a_wheel_for_another_platform_is_named():
    why = pyharness_pip._explain("Can't find a pure Python 3 wheel for 'numpy'.", ["numpy"])
    assert "Pyodide 314" in why and "numpy" in why


def test_installed_is_empty_until_micropip_ran(monkeypatch):
    monkeypatch.delitem(__import__("sys").modules, "micropip", raising=False)
    assert pyharness_pip.installed() == "[]"


def test_the_model_is_told_what_it_can_install():
    shell = ShellConfig()
    assert "none can be installed" in packages_line(shell, [])
    line = packages_line(shell, [("tabulate", "0.10.0")])
    assert "pip install" in line and "tabulate 0.10.0" in line and "offline" in line
    shell = ShellConfig(packages=PackagesPolicy(index_urls=["https://pypi.example/simple"]))
    line = packages_line(shell, [])
    assert "https://pypi.example/simple" in line and "offline" not in line


def test_a_pyodide_distributions_lock_resolves_dependencies_first(monkeypatch):
    # The lock file of a Pyodide distribution the page allows (an index URL ending in
    # .json); pyfetch (which goes through the page in the sandbox) stands in here.
    lock = {"packages": {
        "pandas": {"name": "pandas", "version": "2.3.0", "file_name": "pandas-2.3.0.whl",
                   "depends": ["numpy", "python-dateutil"]},
        "numpy": {"name": "numpy", "version": "2.2.5", "file_name": "numpy-2.2.5.whl",
                  "depends": []},
        "python-dateutil": {"name": "python-dateutil", "version": "2.9.0",
                            "file_name": "https://files.example/dateutil.whl",
                            "depends": ["numpy"]},
    }}

    class Response:
        def raise_for_status(self):
            pass

        async def json(self):
            return lock

    async def pyfetch(url):
        assert url == "https://dist.example/v314/pyodide-lock.json"
        return Response()

    http = types.ModuleType("pyodide.http")
    http.pyfetch = pyfetch
    monkeypatch.setitem(sys.modules, "pyodide.http", http)
    monkeypatch.setattr(pyharness_pip, "distributions", dict)
    url = "https://dist.example/v314/pyodide-lock.json"
    assert pyharness_pip._from_lock(url, ["pandas"], deps=True) == [
        "https://dist.example/v314/numpy-2.2.5.whl", "https://files.example/dateutil.whl",
        "https://dist.example/v314/pandas-2.3.0.whl"]
    assert pyharness_pip._from_lock(url, ["pandas"], deps=False) == [
        "https://dist.example/v314/pandas-2.3.0.whl"]
    assert pyharness_pip._from_lock(url, ["numpy==1.0"], deps=True) is None
    assert pyharness_pip._from_lock(url, ["requests"], deps=True) is None
    assert pyharness_pip._is_lock(url) and not pyharness_pip._is_lock("https://pypi.example/simple")
