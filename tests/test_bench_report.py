"""`pyharness bench` without a browser: its server serves what the bench page fetches
(the page, the bundle, the stock package, the sandbox's runner), and the report computes
the boot-bytes figures from the bundle's files. The full bench is e2e/test_bench.py."""

import sys
import urllib.request

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "emscripten", reason="CPython tooling")


def _bundle(tmp_path):
    from tooling.bench import PYODIDE_CORE

    bundle, stock = tmp_path / "dist", tmp_path / "stock"
    for directory, size in ((bundle / "pyodide", 100), (stock, 70)):
        directory.mkdir(parents=True)
        for name in PYODIDE_CORE:
            (directory / name).write_bytes(b"x" * size)
    (bundle / "pyodide" / "pyharness-0.1.0-py3-none-any.whl").write_bytes(b"wheel")
    return bundle, stock


def test_the_bench_server_serves_what_the_page_fetches(tmp_path):
    from tooling.bench import mounts
    from tooling.serve import StaticServer

    bundle, stock = _bundle(tmp_path)
    server = StaticServer(mounts(bundle, stock)).start()
    try:
        for path in ("/index.html", "/bench.mjs", "/scaling.mjs", "/bare-worker.mjs",
                     "/shell/pyexec.py",
                     "/pyharness/pyodide/pyharness-0.1.0-py3-none-any.whl",
                     "/stock/pyodide.mjs"):
            with urllib.request.urlopen(server.url + path, timeout=10) as response:
                assert response.status == 200 and response.read(), path
    finally:
        server.stop()


def test_the_report_computes_the_boot_bytes_from_the_bundle(tmp_path):
    from tooling.bench import PYODIDE_CORE, _report

    bundle, stock = _bundle(tmp_path)

    def boot(raw):
        return {"ms": 100.0, "warm": 50.0, "memory": 1e6, "raw": raw, "wire": raw / 2}

    boots = {"harness": [boot(900.0), boot(1100.0)], "bare": [boot(500.0)] * 2,
             "stock": [boot(280.0)] * 2}
    bridge = [{"fs": [0.2], "echo": [0.1], "fsMbps": [100.0], "floorMbps": [200.0],
               "harnessEcho": [0.1], "fsNewPath": [0.3], "linksTrusted": True}]
    rm = [{"ms": 10.0, "baselineMs": 5.0, "messages": 1}]
    shell = [{"perCallMs": 2.0, "baselineMs": 1.0, "loadMs": 30.0}]
    tools = [{"perCallMs": 1.0, "readMs": 0.5, "firstPerCallMs": 2.0}]
    report = _report(boots, bridge, rm, shell, tools, bundle, stock)
    assert report["boot_bytes"] == 1000.0
    assert report["pyodide_core_bytes"] == 100.0 * len(PYODIDE_CORE)
    assert report["stock_core_bytes"] == 70.0 * len(PYODIDE_CORE)
    assert report["boot_bytes_ratio"] == 1000.0 / (70.0 * len(PYODIDE_CORE))
    assert report["boot_wire_ratio_stock"] == 500.0 / 140.0


def test_the_scaling_zips_hold_their_small_files(tmp_path):
    import zipfile

    from tooling.bench import FULL, SMOKE
    from tooling.bench.scaling import FILE_BYTES, write_zips

    assert FULL.scaling == (0, 1_000, 10_000)  # what the key names say
    urls = write_zips(tmp_path, SMOKE.scaling)
    assert urls[0] is None
    for files in SMOKE.scaling[1:]:
        with zipfile.ZipFile(tmp_path / f"files-{files}.zip") as archive:
            infos = archive.infolist()
        assert urls[files] == f"/zips/files-{files}.zip"
        assert len(infos) == files
        assert {i.file_size for i in infos} == {FILE_BYTES}


def test_the_scaling_figures_are_each_size_beside_the_empty_workspace():
    from tooling.bench.scaling import scaling_report

    shell = {0: [{"firstMs": 50.0, "samples": [10.0, 12.0, 11.0]}],
             1_000: [{"firstMs": 80.0, "samples": [13.0, 12.0]}],
             10_000: [{"firstMs": 300.0, "samples": [20.0, 22.0, 21.0]}]}
    sync = [{"ms": 900.0, "bytes": 100 * 2**20}]
    reopened = {0: [1000.0], 1_000: [1100.0], 10_000: [1500.0]}
    report = scaling_report(shell, sync, reopened)
    assert report["shell_call_ms_empty"] == 11.0
    assert report["shell_call_ms_1000"] == 12.5
    assert report["shell_scale_ratio"] == 21.0 / 11.0
    assert report["reopen_boot_ms_empty"] == 1000.0
    assert report["reopen_scale_ratio"] == 1.5
    assert report["first_sync_100mb_ms"] == 900.0
    assert report["first_sync_empty_ms"] == 50.0
    assert report["first_sync_100mb_bytes"] == 100 * 2**20
    assert report["detail"]["first_sync_100mb_ms"]["ratio"] == 18.0
    assert set(report["detail"]) == {"shell_call_ms_1000", "shell_call_ms_10000",
                                     "reopen_boot_ms_1000", "reopen_boot_ms_10000",
                                     "first_sync_100mb_ms"}


def test_the_smoke_sizes_map_onto_the_full_keys():
    """The smoke run's sizes are smaller, in the same order, so each key holds a figure
    of its size's step (empty, middle, large)."""
    from tooling.bench.scaling import scaling_report

    shell = {0: [{"firstMs": 50.0, "samples": [10.0]}], 20: [{"firstMs": 60.0, "samples": [11.0]}],
             200: [{"firstMs": 70.0, "samples": [12.0]}]}
    report = scaling_report(shell, [{"ms": 90.0, "bytes": 4 * 2**20}],
                            {0: [100.0], 20: [110.0], 200: [130.0]})
    assert report["shell_call_ms_1000"] == 11.0
    assert report["shell_call_ms_10000"] == 12.0
    assert report["reopen_scale_ratio"] == 1.3
