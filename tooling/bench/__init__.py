"""``pyharness bench``: what users feel, each figure beside its physical baseline.

Serves the bundle and ``page/`` on loopback, drives headless Chromium with Playwright,
and reports medians, p95s and ratios. Absolute times on a shared machine are noisy;
the ratios (same run, same browser) are what to compare. The workspace-scaling figures
(the same steps on 1,000 and 10,000 files beside an empty workspace) are in scaling.py.
CPython only.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..provider_server import ProviderServer, RecordedRequest
from ..serve import StaticServer

PAGE = Path(__file__).with_name("page")
CHROMIUM = os.environ.get("PYHARNESS_CHROMIUM", "/usr/bin/chromium")
FLAGS = ["--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--no-first-run", "--disable-quic"]
# The smoke run's browser (its figures mean nothing): WebAssembly on V8's baseline
# compiler only, as make test's parallel browser rows run it (the Makefile says why). The
# optimizing compiler's background work, thrown away with each fresh context, took about
# half of the smoke run's CPU on two cores.
SMOKE_FLAGS = ("--js-flags=--liftoff-only",)
PYODIDE_CORE = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip")


def median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else math.nan


def p95(xs: list[float]) -> float:
    if not xs:
        return math.nan
    ordered = sorted(xs)
    return ordered[min(len(ordered) - 1, math.ceil(0.95 * len(ordered)) - 1)]


@contextmanager
def _browser(extra: tuple[str, ...] = ()) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    args = [*FLAGS, *extra]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        args.append("--no-sandbox")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=args)
        try:
            yield browser
        finally:
            browser.close()


class _Page:
    """One fresh browser context (empty cache) with the bench page, logging bytes."""

    def __init__(self, browser: Any, url: str) -> None:
        self.context = browser.new_context()
        self.page = self.context.new_page()
        self.fetched: list[tuple[str, int, int]] = []  # url, raw bytes, wire bytes
        self.page.on("requestfinished", self._finished)
        self.url = url
        self.page.goto(url)
        self.page.wait_for_function("window.bench !== undefined")

    def _finished(self, request: Any) -> None:
        # Sizes come from the network layer: the wire size is the body as sent (maybe
        # compressed), the raw size what Content-Length or the decoded body says.
        try:
            response = request.response()
            if response is None:
                return
            wire = int(request.sizes().get("responseBodySize", 0))
            headers = response.all_headers()
            raw = (len(response.body()) if "content-encoding" in headers
                   else int(headers.get("content-length", wire)))
        except Exception:  # the page or context closed meanwhile: nothing to count
            return
        self.fetched.append((request.url, raw, wire))

    def revisit(self) -> None:
        """The same page again in the same context: a returning visitor (HTTP cache and
        code cache kept; the server answers revalidations with 304)."""
        self.page.goto(self.url)
        self.page.wait_for_function("window.bench !== undefined")

    def call(self, name: str, arg: Any = None) -> Any:
        return self.page.evaluate(f"(arg) => bench.{name}(arg ?? undefined)", arg)

    def bytes_under(self, prefix: str) -> tuple[int, int]:
        rows = [(raw, wire) for url, raw, wire in self.fetched
                if urlsplit(url).path.startswith(prefix)]
        return sum(r for r, _ in rows), sum(w for _, w in rows)

    def close(self) -> None:
        self.context.close()


def _metric(samples: list[float], base: list[float]) -> dict[str, float]:
    """Median and p95 of a metric, its baseline's median, and metric / baseline."""
    out = {"median": median(samples), "p95": p95(samples), "baseline": median(base)}
    out["ratio"] = out["median"] / out["baseline"]
    return out


def _beside(report: dict[str, Any], key: str, samples: list[float], base: list[float],
            base_key: str, ratio_key: str) -> None:
    """``samples`` beside ``base`` into the report: the detail under ``key``, its median
    as ``key``, the baseline's median as ``base_key``, their ratio as ``ratio_key``."""
    metric = report["detail"][key] = _metric(samples, base)
    report[key], report[base_key], report[ratio_key] = (
        metric["median"], metric["baseline"], metric["ratio"])


def mounts(bundle: Path, stock: Path) -> dict[str, Path]:
    """What the bench's server serves: the page, the bundle, the stock npm package exactly
    as installed (no .gz siblings: a plain static host), and shell/ (the sandbox's python3
    runner, which is in no wheel: the in-harness baseline runs it from its source)."""
    from ..build.bundle import repo_root

    return {"/": PAGE, "/pyharness/": bundle, "/stock/": stock, "/shell/": repo_root() / "shell"}


@dataclass(frozen=True)
class Sizes:
    """How much each step does: the arguments each page step (page/*.mjs) is called with,
    and the workspace sizes of the scaling figures. FULL is what the figures and the key
    names mean. SMOKE runs every step of the bench once and small, to prove in `make test`
    that the bench still works end to end; its figures mean nothing (a key keeps its full
    size's name, e.g. reopen_boot_ms_10000 over 200 files), and `make bench` measures."""

    steps: dict[str, dict[str, Any]] = field(default_factory=dict)
    scaling: tuple[int, int, int] = (0, 1_000, 10_000)
    revisits: int = 2  # a first visit, then this many: the last is the warm one

    def of(self, step: str) -> dict[str, Any]:
        return self.steps.get(step, {})


FULL = Sizes()
SMOKE = Sizes(steps={
    "bridge": {"ops": 40, "batch": 10, "mb": 1, "rounds": 1},
    "rmTree": {"tree": 100},
    "shell": {"n": 3},
    "sandboxPython": {"n": 3},
    "promptLatency": {"n": 3, "warm": 1},
    "storage": {"ops": 20, "batch": 5, "files": 50},
    "toolCalls": {"n": 5, "pairs": 1},
    "checkpointCosts": {"files": 50},
    "budgetChecks": {"n": 3, "pairs": 1},
    "subagentOverhead": {"pairs": 1},
    "previewLoad": {"pairs": 1},
    "gitOps": {"files": 50, "changed": 5, "reps": 1},
    "shellOnFiles": {"n": 3, "warm": 1},
    "firstSync": {"count": 4, "mb": 1},
}, scaling=(0, 20, 200), revisits=1)


def run(bundle: Path, reps: int = 5, log: Callable[[str], None] = print,
        sizes: Sizes = FULL, flags: tuple[str, ...] = ()) -> dict[str, Any]:
    """Measure everything; returns the flat key → value report plus per-metric detail.
    `flags`: more Chromium flags (the smoke run's SMOKE_FLAGS)."""
    from ..build.bundle import repo_root

    stock = repo_root() / "node_modules" / "pyodide"
    if not (stock / "pyodide.mjs").exists():
        raise RuntimeError(f"{stock} is missing (the stock baseline); run `npm ci`")
    from .scaling import write_zips  # here: scaling.py imports this module

    with tempfile.TemporaryDirectory(prefix="pyharness-bench-zips-") as tmp:
        zips = write_zips(Path(tmp), sizes.scaling)
        server = StaticServer({**mounts(bundle, stock), "/zips/": Path(tmp)}).start()
        provider = _ArrivalServer()
        provider.start()
        url = f"{server.url}/index.html"
        try:
            with _browser(flags) as browser:
                report = _measure(browser, url, bundle, stock, provider, reps, log, sizes)
                _scale(report, browser, url, zips, reps, log, sizes)
                return report
        finally:
            provider.stop()
            server.stop()


def _scale(report: dict[str, Any], browser: Any, url: str, zips: dict[int, str | None],
           reps: int, log: Callable[[str], None], sizes: Sizes) -> None:
    """Add the workspace-scaling figures (scaling.py) to `report`."""
    from .scaling import measure

    scaled = measure(lambda: _Page(browser, url), zips, reps, log, sizes)
    report["detail"].update(scaled.pop("detail"))
    report.update(scaled)


def snapshot_probe(bundle: Path, reps: int = 5,
                   log: Callable[[str], None] = print) -> dict[str, Any]:
    """The memory-snapshot question of docs/performance.md, measured: a snapshot of the
    bundle's runtime made in Node, then bare Pyodide + the harness's wheels + its import,
    booted normally and from the snapshot in turns, each in a fresh context."""
    import gzip
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory(prefix="pyharness-snapshot-") as tmp:
        snapshot = Path(tmp) / "runtime.bin"
        log("making the runtime snapshot in Node")
        subprocess.run(["node", str(Path(__file__).with_name("snapshot.mjs")),
                        str(bundle / "pyodide"), str(snapshot)], check=True,
                       capture_output=True, text=True, timeout=300)
        raw = snapshot.read_bytes()
        server = StaticServer({"/": PAGE, "/pyharness/": bundle, "/snapshot/": Path(tmp)}).start()
        runs: dict[str, list[dict[str, float]]] = {"normal": [], "snapshot": []}
        url = "/snapshot/runtime.bin"
        try:
            with _browser() as browser:
                for i in range(reps):
                    log(f"snapshot probe {i + 1}/{reps}")
                    for kind, arg in (("normal", {}), ("snapshot", {"snapshot": url})):
                        page = _Page(browser, f"{server.url}/index.html")
                        runs[kind].append(page.call("bootBareHarness", arg))
                        page.close()
        finally:
            server.stop()
    report: dict[str, Any] = {"snapshot_bytes": float(len(raw)),
                              "snapshot_gzip_bytes": float(len(gzip.compress(raw, 6)))}
    for kind, rows in runs.items():
        for key, name in (("ms", "boot"), ("runtimeMs", "runtime"), ("packagesMs", "packages"),
                          ("importMs", "import")):
            report[f"{kind}_{name}_ms"] = median([float(r[key]) for r in rows])
    report["snapshot_boot_ratio"] = report["snapshot_boot_ms"] / report["normal_boot_ms"]
    return report


class _ArrivalServer(ProviderServer):
    """The scripted provider, noting when each model request arrives (wall clock)."""

    def __init__(self) -> None:
        super().__init__()
        self.arrivals: list[float] = []

    def _record(self, request: RecordedRequest) -> int:
        if request.method == "POST":
            self.arrivals.append(time.time() * 1000)
        return super()._record(request)


def _visits(browser: Any, url: str, boot: str, arg: Any, prefix: str,
            revisits: int = 2) -> dict[str, Any]:
    """A first visit (fresh context) and a returning one: the last of `revisits` more
    visits of the same context (by the third, the second has let the browser cache
    compiled code)."""
    page = _Page(browser, url)
    first = page.call(boot, arg)
    page.page.wait_for_timeout(500)  # let the worker's last responses be counted
    raw, wire = page.bytes_under(prefix)
    fetched = sorted({urlsplit(u).path for u, _, _ in page.fetched})
    warm = first
    for _ in range(revisits):
        page.revisit()
        warm = page.call(boot, arg)
    page.close()
    return {"ms": first["ms"], "memory": first["memory"], "warm": warm["ms"], "raw": raw,
            "wire": wire, "paths": fetched}


def _measure(browser: Any, url: str, bundle: Path, stock: Path, provider: _ArrivalServer,
             reps: int, log: Callable[[str], None], sizes: Sizes = FULL) -> dict[str, Any]:
    kinds = {"harness": ("bootHarness", None, "/pyharness/"),
             "bare": ("bootBare", {"stock": False}, "/pyharness/"),
             "stock": ("bootBare", {"stock": True}, "/stock/")}
    boots: dict[str, list[dict[str, Any]]] = {k: [] for k in kinds}
    for i in range(reps):
        log(f"boot {i + 1}/{reps}")
        for kind, (fn, arg, prefix) in kinds.items():
            boots[kind].append(_visits(browser, url, fn, arg, prefix, sizes.revisits))

    log("bridge, rm, shell, tool calls, prompt latency")
    page = _Page(browser, url)
    bridge = [page.call("bridge", sizes.of("bridge")) for _ in range(max(1, reps // 2))]
    rm = [page.call("rmTree", sizes.of("rmTree")) for _ in range(reps)]
    shell = [page.call("shell", sizes.of("shell")) for _ in range(reps)]
    sandbox = [page.call("sandboxPython", sizes.of("sandboxPython")) for _ in range(reps)]
    latency = {"n": 20, "warm": 3, **sizes.of("promptLatency")}
    n, warm = latency["n"], latency["warm"]
    provider.reset()
    provider.arrivals.clear()
    provider.script([{"text": "ok"}] * (n + warm))
    prompts = page.call("promptLatency", {"baseUrl": provider.base_url, "n": n, "warm": warm})
    # Page and server read the same system clock (performance.timeOrigin is wall time).
    arrivals = [a - s for a, s in zip(provider.arrivals, prompts["starts"], strict=True)]
    log("storage (OPFS beside memory)")
    stores = [page.call("storage", sizes.of("storage")) for _ in range(max(1, reps // 2))]
    tools = [page.call("toolCalls", sizes.of("toolCalls")) for _ in range(reps)]
    log("checkpoints (on beside off)")
    cps = [page.call("checkpointCosts", sizes.of("checkpointCosts"))
           for _ in range(max(1, reps // 2))]
    log("budget checks (on beside off), a subagent (beside the parent)")
    budgets = [page.call("budgetChecks", sizes.of("budgetChecks"))
               for _ in range(max(1, reps // 2))]
    subagents = [page.call("subagentOverhead", sizes.of("subagentOverhead"))
                 for _ in range(max(1, reps // 2))]
    log("the preview (beside a bare iframe of the same files)")
    previews = [page.call("previewLoad", sizes.of("previewLoad"))
                for _ in range(max(1, reps // 2))]
    log("git in the shell (beside the host's git)")
    gits = [page.call("gitOps", sizes.of("gitOps")) for _ in range(max(1, reps // 2))]
    log("pip install (the bundle's index)")
    pips = [page.call("pipInstall") for _ in range(max(1, reps // 2))]
    page.close()
    report = _report(boots, bridge, rm, shell, tools, bundle, stock)
    report["prompt_to_request_ms"] = median([float(x) for x in prompts["samples"]])
    report["prompt_to_arrival_ms"] = median(arrivals[warm:])
    report["detail"]["sandbox_call_ms"] = _metric([s["callMs"] for s in sandbox],
                                                  [s["inHarnessMs"] for s in sandbox])
    report.update({
        "sandbox_start_ms": median([float(s["startMs"]) for s in sandbox]),
        "sandbox_call_ms": report["detail"]["sandbox_call_ms"]["median"],
        "sandbox_call_in_harness_ms": report["detail"]["sandbox_call_ms"]["baseline"],
    })
    def beside(key: str) -> dict[str, float]:
        """The OPFS samples of `key` beside the memory store's, over every run."""
        return _metric([float(x) for st in stores for x in st[f"opfs{key}"]],
                       [float(x) for st in stores for x in st[f"memory{key}"]])

    for key, name in (("Read", "read"), ("Write", "write"), ("Stat", "stat"),
                      ("Readdir", "readdir")):
        report["detail"][f"opfs_{name}_ms"] = beside(key)
    report["detail"]["opfs_1000_files_ms"] = _metric(
        [s["opfsImportMs"] for s in stores], [s["memoryImportMs"] for s in stores])
    report["detail"]["opfs_tool_1000_files_ms"] = _metric(
        [s["opfsToolMs"] for s in stores], [s["memoryToolMs"] for s in stores])
    report.update({
        "opfs_read_ratio": report["detail"]["opfs_read_ms"]["ratio"],
        "opfs_stat_ratio": report["detail"]["opfs_stat_ms"]["ratio"],
        "opfs_readdir_ratio": report["detail"]["opfs_readdir_ms"]["ratio"],
        "opfs_tool_1000_files_ms": report["detail"]["opfs_tool_1000_files_ms"]["median"],
        "opfs_tool_1000_files_ratio": report["detail"]["opfs_tool_1000_files_ms"]["ratio"],
        "memory_tool_1000_files_ms": report["detail"]["opfs_tool_1000_files_ms"]["baseline"],
        "opfs_write_ms": report["detail"]["opfs_write_ms"]["median"],
        "memory_write_ms": report["detail"]["opfs_write_ms"]["baseline"],
        "opfs_1000_files_ms": report["detail"]["opfs_1000_files_ms"]["median"],
        "opfs_restore_1000_ms": median([float(s["restoreMs"]) for s in stores]),
        "opfs_open_empty_ms": median([float(s["emptyOpenMs"]) for s in stores]),
    })
    # A checkpoint's cost: the same calls with checkpoints on, beside off.
    for name, key in (("write_1kb", "write"), ("python_1000_files", "python")):
        _beside(report, f"checkpoint_{name}_ms",
                [float(c[f"{key}_on_ms"]) + float(c[f"{key}_end_on_ms"]) for c in cps],
                [float(c[f"{key}_off_ms"]) + float(c[f"{key}_end_off_ms"]) for c in cps],
                f"no_checkpoint_{name}_ms", f"checkpoint_{name}_ratio")
    report["revert_1000_files_ms"] = median([float(c["revert_ms"]) for c in cps])
    # Budget checks' cost per model request: every limit set, beside no budget.
    _beside(report, "budget_request_ms",
            [float(x) for b in budgets for x in b["withBudget"]],
            [float(x) for b in budgets for x in b["without"]],
            "no_budget_request_ms", "budget_check_ratio")
    # A subagent's cost: one read delegated, beside the same read made by the parent.
    _beside(report, "subagent_task_ms",
            [float(x) for s in subagents for x in s["withSubagent"]],
            [float(x) for s in subagents for x in s["inParent"]],
            "parent_task_ms", "subagent_ratio")
    # The preview: a written index.html to its load event, and a reload after a one-file
    # change, beside a bare iframe of the same files from the static server.
    _beside(report, "preview_write_to_load_ms",
            [float(x) for p in previews for x in p["written"]],
            [float(x) for p in previews for x in p["bare"]],
            "bare_iframe_load_ms", "preview_load_ratio")
    _beside(report, "preview_change_to_load_ms",
            [float(x) for p in previews for x in p["changed"]],
            [float(x) for p in previews for x in p["bareReload"]],
            "bare_iframe_reload_ms", "preview_reload_ratio")
    _git_report(report, gits, sizes)
    report["sandbox_module_bytes"] = float((bundle / "sandbox.mjs").stat().st_size)
    report.update(_packages(bundle, boots["harness"], pips))
    return report


def _git_report(report: dict[str, Any], gits: list[dict[str, list[float]]],
                sizes: Sizes) -> None:
    """git in the shell beside the host's git on the same files (tooling/bench/git.py),
    and beside `true` in the same run (what any shell command costs)."""
    from .git import host_git

    step = {"files": 1000, "changed": 10, "reps": 3, **sizes.of("gitOps")}
    host = host_git(step["files"], step["changed"], step["reps"])

    def ours(key: str) -> list[float]:
        return [float(x) for g in gits for x in g[key]]

    for key, name in (("status", "git_status"), ("statusAgain", "git_status_again"),
                      ("diff", "git_diff"), ("commit", "git_commit")):
        _beside(report, f"{name}_ms", ours(key), host[key], f"host_{name}_ms",
                f"{name}_ratio")
    report["shell_true_ms"] = median(ours("true"))


def _packages(bundle: Path, boots: list[dict[str, Any]],
              pips: list[dict[str, Any]]) -> dict[str, float]:
    """pip in the sandbox (a small pure wheel from the bundle's index), and what the
    package index costs the boot: nothing of it may be fetched then."""
    manifest = json.loads((bundle / "manifest.json").read_text())
    extras = {f"/pyharness/{p['file']}" for p in manifest.get("packages", [])}
    micropip = manifest.get("micropip") or {}
    if micropip:
        extras.add(f"/pyharness/{micropip['file']}")
    at_boot = [sum((bundle / p.removeprefix("/pyharness/")).stat().st_size
                   for p in b["paths"] if p in extras) for b in boots]
    return {
        "pip_install_ms": median([float(p["installMs"]) for p in pips]),
        "import_after_install_ms": median([float(p["importMs"]) for p in pips]),
        "python_call_ms": median([float(p["baselineMs"]) for p in pips]),
        "pip_install_ratio": median([float(p["installMs"]) / float(p["baselineMs"])
                                     for p in pips]),
        "package_bytes_at_boot": median([float(b) for b in at_boot]),
        "micropip_wheel_bytes": float(micropip.get("bytes", 0)),
        "package_index_bytes": float(sum(p["bytes"] for p in manifest.get("packages", []))),
    }


def _report(boots: dict[str, list[dict[str, Any]]], bridge: list[dict[str, Any]],
            rm: list[dict[str, Any]], shell: list[dict[str, Any]],
            tools: list[dict[str, Any]], bundle: Path, stock: Path) -> dict[str, Any]:
    def flat(rows: list[dict[str, Any]], key: str) -> list[float]:
        return [float(x) for r in rows for x in r[key]]

    def of(kind: str, key: str) -> list[float]:
        return [float(b[key]) for b in boots[kind]]

    detail = {
        "boot_ms": _metric(of("harness", "ms"), of("bare", "ms")),
        "boot_ms_warm": _metric(of("harness", "warm"), of("bare", "warm")),
        "boot_ms_stock": _metric(of("harness", "ms"), of("stock", "ms")),
        "boot_ms_stock_warm": _metric(of("harness", "warm"), of("stock", "warm")),
        "boot_wire_bytes_stock": _metric(of("harness", "wire"), of("stock", "wire")),
        "fs_rtt_ms": _metric(flat(bridge, "fs"), flat(bridge, "echo")),
        # The best round of each (rounds take turns): a 16 MB round's time moves up to 5 x
        # between rounds on a shared machine (page faults and collections of big buffers).
        "throughput_mbps": _metric([max(b["fsMbps"]) for b in bridge],
                                   [max(b["floorMbps"]) for b in bridge]),
        "rm_1000_ms": _metric([r["ms"] for r in rm], [r["baselineMs"] for r in rm]),
        "shell_ms": _metric([s["perCallMs"] for s in shell], [s["baselineMs"] for s in shell]),
        "memory_bytes": _metric(of("harness", "memory"), of("stock", "memory")),
    }
    raw = median(of("harness", "raw"))
    core_files = sum((bundle / "pyodide" / f).stat().st_size for f in PYODIDE_CORE)
    stock_files = sum((stock / f).stat().st_size for f in PYODIDE_CORE)
    per_call = [t["perCallMs"] - t["readMs"] for t in tools]
    first_call = [t["firstPerCallMs"] - t["readMs"] for t in tools]
    report: dict[str, Any] = {
        "boot_ms": detail["boot_ms"]["median"],
        "bare_boot_ms": detail["boot_ms"]["baseline"],
        "boot_ratio": detail["boot_ms"]["ratio"],
        "boot_ratio_warm": detail["boot_ms_warm"]["ratio"],
        "stock_boot_ms": detail["boot_ms_stock"]["baseline"],
        "boot_ratio_stock": detail["boot_ms_stock"]["ratio"],
        "boot_ms_warm": detail["boot_ms_stock_warm"]["median"],
        "stock_boot_ms_warm": detail["boot_ms_stock_warm"]["baseline"],
        "boot_ratio_stock_warm": detail["boot_ms_stock_warm"]["ratio"],
        "boot_bytes": raw,
        "boot_wire_bytes": detail["boot_wire_bytes_stock"]["median"],
        "stock_wire_bytes": detail["boot_wire_bytes_stock"]["baseline"],
        "boot_wire_ratio_stock": detail["boot_wire_bytes_stock"]["ratio"],
        "pyodide_core_bytes": float(core_files),
        "stock_core_bytes": float(stock_files),
        "boot_bytes_ratio": raw / stock_files,
        "fs_rtt_ms": detail["fs_rtt_ms"]["median"],
        "echo_rtt_ms": detail["fs_rtt_ms"]["baseline"],
        "harness_echo_rtt_ms": median(flat(bridge, "harnessEcho")),
        "fs_rtt_new_path_ms": median(flat(bridge, "fsNewPath")),
        "fs_rtt_ratio": detail["fs_rtt_ms"]["ratio"],
        "fs_jail_trusted": float(all(b["linksTrusted"] for b in bridge)),
        "throughput_mbps": detail["throughput_mbps"]["median"],
        "fs_floor_mbps": detail["throughput_mbps"]["baseline"],
        "throughput_floor_ratio": detail["throughput_mbps"]["ratio"],
        "rm_1000_ms": detail["rm_1000_ms"]["median"],
        "rm_1000_baseline_ms": detail["rm_1000_ms"]["baseline"],
        "rm_1000_ratio": detail["rm_1000_ms"]["ratio"],
        "rm_1000_round_trips": median([float(r["messages"]) for r in rm]),
        "shell_ms": detail["shell_ms"]["median"],
        "shell_baseline_ms": detail["shell_ms"]["baseline"],
        "shell_ratio": detail["shell_ms"]["ratio"],
        "shell_load_ms": median([float(s["loadMs"]) for s in shell]),
        "tool_call_overhead_ms": median(per_call),
        "tool_call_overhead_first_ms": median(first_call),
        "memory_ratio": detail["memory_bytes"]["ratio"],
        "worker_memory_bytes": detail["memory_bytes"]["median"],
        "stock_memory_bytes": detail["memory_bytes"]["baseline"],
        "bare_memory_bytes": median(of("bare", "memory")),
    }
    report["detail"] = detail
    return report


def table(report: dict[str, Any]) -> str:
    """The report as a Markdown table (the one docs/performance.md shows)."""
    rows = ["| metric | median | p95 | baseline | ratio |", "|---|---:|---:|---:|---:|"]
    for name, m in report["detail"].items():
        rows.append(f"| {name} | {m['median']:.3f} | {m['p95']:.3f} | "
                    f"{m['baseline']:.3f} | {m['ratio']:.3f} |")
    rows.append("")
    rows.append("| key | value |")
    rows.append("|---|---:|")
    for key, value in report.items():
        if key != "detail":
            rows.append(f"| {key} | {value:,.3f} |")
    return "\n".join(rows)


def to_json(report: dict[str, Any]) -> str:
    return json.dumps(report, indent=1, sort_keys=False)
