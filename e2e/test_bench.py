"""`pyharness bench --json --smoke` runs end to end (every step of the bench once, at
small sizes: the row proves the bench works, `make bench` measures at full size) and
reports every key as a finite number. Never a timing threshold: the figures themselves
are in docs/performance.md. About 80 s of a browser alone: `make bench-smoke` and `make
fuzz` run these rows, not `make test` (marked bench_smoke)."""

import json
import math
import os
import signal
import subprocess
import sys

import pytest

from e2e.conftest import BUNDLE, CHROMIUM

pytestmark = pytest.mark.bench_smoke


def bench(*args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    """Run `pyharness bench` in a process group of its own, and end the whole group
    (its Chromium too) when it overruns: killing only the bench would leave its browser
    holding the output pipes, and the row waiting on them for good."""
    command = [sys.executable, "-m", "tooling.cli", "bench", *args, "--bundle", str(BUNDLE)]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          start_new_session=True,
                          env={**os.environ, "PYHARNESS_CHROMIUM": CHROMIUM}) as process:
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except BaseException:
            os.killpg(process.pid, signal.SIGKILL)
            stdout, stderr = process.communicate()
            pytest.fail(f"pyharness bench {' '.join(args)} did not end within {timeout} s; "
                        f"its log ends: {stderr[-3000:]}")
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)

BENCH_TIMEOUT = 300  # seconds; the smoke run takes about 40 s alone
KEYS = [
    "boot_ms", "bare_boot_ms", "boot_ratio", "boot_ratio_warm",
    "stock_boot_ms", "boot_ratio_stock", "boot_ms_warm", "stock_boot_ms_warm",
    "boot_ratio_stock_warm",
    "boot_bytes", "pyodide_core_bytes", "stock_core_bytes", "boot_bytes_ratio",
    "boot_wire_bytes", "stock_wire_bytes", "boot_wire_ratio_stock",
    "fs_rtt_ms", "echo_rtt_ms", "harness_echo_rtt_ms", "fs_rtt_ratio", "fs_jail_trusted",
    "fs_rtt_new_path_ms",
    "throughput_mbps", "fs_floor_mbps", "throughput_floor_ratio",
    "rm_1000_ms", "rm_1000_round_trips", "rm_1000_ratio",
    "shell_ms", "shell_baseline_ms", "shell_ratio", "shell_load_ms",
    "prompt_to_request_ms", "prompt_to_arrival_ms",
    "tool_call_overhead_ms", "tool_call_overhead_first_ms",
    "memory_ratio", "worker_memory_bytes", "stock_memory_bytes",
    "sandbox_start_ms", "sandbox_call_ms", "sandbox_call_in_harness_ms",
    "opfs_read_ratio", "opfs_write_ms", "memory_write_ms", "opfs_1000_files_ms",
    "opfs_restore_1000_ms", "opfs_open_empty_ms", "opfs_stat_ratio", "opfs_readdir_ratio",
    "opfs_tool_1000_files_ms", "memory_tool_1000_files_ms", "opfs_tool_1000_files_ratio",
    "shell_call_ms_empty", "shell_call_ms_1000", "shell_call_ms_10000", "shell_scale_ratio",
    "reopen_boot_ms_empty", "reopen_boot_ms_1000", "reopen_boot_ms_10000",
    "reopen_scale_ratio", "first_sync_100mb_ms", "first_sync_empty_ms",
    "first_sync_100mb_bytes",
    "checkpoint_write_1kb_ms", "no_checkpoint_write_1kb_ms", "checkpoint_write_1kb_ratio",
    "checkpoint_python_1000_files_ms", "no_checkpoint_python_1000_files_ms",
    "checkpoint_python_1000_files_ratio", "revert_1000_files_ms",
    "budget_request_ms", "no_budget_request_ms", "budget_check_ratio",
    "subagent_task_ms", "parent_task_ms", "subagent_ratio",
    "pip_install_ms", "import_after_install_ms", "python_call_ms", "pip_install_ratio",
    "package_bytes_at_boot", "micropip_wheel_bytes", "package_index_bytes",
    "git_status_ms", "host_git_status_ms", "git_status_ratio",
    "git_status_again_ms", "host_git_status_again_ms", "git_status_again_ratio",
    "git_diff_ms", "host_git_diff_ms", "git_diff_ratio",
    "git_commit_ms", "host_git_commit_ms", "git_commit_ratio",
    "shell_true_ms", "sandbox_module_bytes",
]
# Measured, and zero when all is well: no wheel of the sandbox's index loads at boot.
ZERO = ("package_bytes_at_boot",)


@pytest.mark.timeout(BENCH_TIMEOUT + 60)
def test_bench_reports_every_key():
    result = bench("--json", "--smoke", timeout=BENCH_TIMEOUT)
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout)
    missing = [k for k in KEYS if k not in report]
    assert missing == []
    bad = {k: report[k] for k in KEYS if not math.isfinite(report[k])}
    assert bad == {}
    assert report["rm_1000_round_trips"] == 1
    assert report["fs_jail_trusted"] == 1  # no symlink: h.fs skipped realpath throughout
    # What the workspace held: SMOKE's firstSync, 4 files of 1 MB (100 of 1 MB in full).
    assert report["first_sync_100mb_bytes"] == 4 * 2**20
    assert report["package_bytes_at_boot"] == 0  # micropip and the extras load on pip only
    # Sane, not fast: every time and size is positive, and the request went out.
    assert all(report[k] > 0 for k in KEYS if k != "rm_1000_round_trips" and k not in ZERO)
    for metric in report["detail"].values():
        assert set(metric) == {"median", "p95", "baseline", "ratio"}


SNAPSHOT_KEYS = [
    "snapshot_bytes", "snapshot_gzip_bytes", "snapshot_boot_ratio",
    *(f"{kind}_{step}_ms" for kind in ("normal", "snapshot")
      for step in ("boot", "runtime", "packages", "import")),
]


@pytest.mark.timeout(360)
def test_snapshot_probe_boots_from_a_snapshot():
    """`--snapshot-probe` makes a runtime snapshot in Node and boots the bare harness from
    it in Chromium beside a normal boot (the decision in docs/performance.md)."""
    result = bench("--snapshot-probe", "--json", "--reps", "1", timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout)
    assert sorted(report) == sorted(SNAPSHOT_KEYS)
    assert all(math.isfinite(v) and v > 0 for v in report.values())
    # The snapshot is the runtime's memory: far larger than it is gzipped.
    assert report["snapshot_gzip_bytes"] < report["snapshot_bytes"]
