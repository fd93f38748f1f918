// Measurements for `pyharness bench`, each with its baseline from the same page.
// Every function returns plain numbers (ms unless named otherwise).
import { createHarness, deleteWorkspace } from "/pyharness/pyharness.mjs";

const BASE = new URL("/pyharness/", location.href).href;
const scripted = (turns = []) => ({ api: "scripted", turns });
const now = () => performance.now();

class Bare {
  constructor() {
    this.worker = new Worker(new URL("./bare-worker.mjs", import.meta.url), { type: "module" });
    this.pending = new Map();
    this.next = 1;
    this.worker.onmessage = ({ data }) => {
      const { resolve, reject } = this.pending.get(data.id);
      this.pending.delete(data.id);
      data.ok ? resolve(data) : reject(new Error(data.message));
    };
  }
  call(op, args = {}) {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, op, base: BASE, ...args });
    });
  }
  close() {
    this.worker.terminate();
  }
}

const stats = (h) => h._request({ type: "stats" });

export async function bootHarness() {
  const t0 = now();
  const steps = {};
  const h = await createHarness({ storage: "memory", model: scripted(), onProgress: (p) => (steps[`${p.step}_${p.state}`] = p.ms) });
  const ms = now() - t0;
  const mem = await stats(h);
  h.close();
  return { ms, steps, memory: mem.wasmBytes + (mem.jsHeapBytes || 0) };
}

/** Bare Pyodide in a fresh module worker: from the bundle, or (`stock`) the npm
 * package's own files, unmodified, as a user would load it. */
export async function bootBare({ stock = false } = {}) {
  const t0 = now();
  const bare = new Bare();
  await bare.call("boot", { stock });
  const ms = now() - t0;
  const mem = await bare.call("stats");
  bare.close();
  return { ms, memory: mem.wasmBytes + (mem.jsHeapBytes || 0) };
}

/** `--snapshot-probe`: bare Pyodide from the bundle (or restored from `snapshot`), then
 * the harness's wheels and its import, each step timed. */
export async function bootBareHarness({ snapshot = null } = {}) {
  const t0 = now();
  const bare = new Bare();
  await bare.call("boot", { snapshot });
  const t1 = now();
  await bare.call("loadHarness");
  const t2 = now();
  await bare.call("python", { code: "import harness.runtime.pyodide" });
  const t3 = now();
  bare.close();
  return { ms: t3 - t0, runtimeMs: t1 - t0, packagesMs: t2 - t1, importMs: t3 - t2 };
}

function middle(xs) {
  const sorted = [...xs].sort((a, b) => a - b);
  const m = sorted.length >> 1;
  return sorted.length % 2 ? sorted[m] : (sorted[m - 1] + sorted[m]) / 2;
}

/** The mean time of one op per batch of `batch` (after a warm-up), for several ops taking
 * turns batch by batch (so a slow moment of the
 * machine falls on all of them alike), in the reverse order every other round (so no op
 * always comes after the same other one): {name: samples}. */
async function interleaved(n, batch, ops) {
  const out = {};
  for (const [name, op] of Object.entries(ops)) {
    out[name] = [];
    for (let i = 0; i < Math.min(50, n); i++) await op(); // warm up
  }
  const forward = Object.entries(ops);
  const backward = [...forward].reverse();
  for (let done = 0; done < n; done += batch) {
    for (const [name, op] of (done / batch) % 2 ? backward : forward) {
      const t = now();
      for (let i = 0; i < batch; i++) await op();
      out[name].push((now() - t) / batch);
    }
  }
  return out;
}

/** A trivial module worker on this page that posts each message straight back. */
class Echo {
  constructor() {
    this.worker = new Worker(new URL("./echo-worker.mjs", import.meta.url), { type: "module" });
    this.worker.onmessage = ({ data }) => this.resolve(data);
  }
  roundTrip(buffer) {
    return new Promise((resolve) => {
      this.resolve = resolve;
      this.worker.postMessage({ data: buffer }, [buffer]);
    });
  }
  close() {
    this.worker.terminate();
  }
}

export async function bridge({ ops = 1000, batch = 50, mb = 16, rounds = 7 } = {}) {
  const h = await createHarness({ storage: "memory", model: scripted() });
  await h.fs.writeFile("kb.bin", new Uint8Array(1024));
  // Files read once each: the worker asks the jail once per path (worker.mjs).
  await h.fs.mkdir("many");
  for (let i = 0; i < ops + 50; i++) await h.fs.writeFile(`many/${i}.bin`, new Uint8Array(1024));
  let next = 0;
  const echo = new Echo();
  await echo.roundTrip(new ArrayBuffer(8)); // the worker has started
  const { fs, fsNewPath, trivial, harnessEcho } = await interleaved(ops, batch, {
    fs: () => h.fs.readFile("kb.bin"),
    fsNewPath: () => h.fs.readFile(`many/${next++}.bin`),
    trivial: () => echo.roundTrip(new Uint8Array(1024).buffer),
    harnessEcho: () => {
      const buf = new Uint8Array(1024).buffer;
      return h._request({ type: "echo", data: buf }, [buf]);
    },
  });
  echo.close();
  // Throughput, beside its floor: bare Pyodide writing and reading the same bytes in its
  // own worker on this page. Rounds take turns (a slow moment of the machine, or a
  // garbage collection of the page's big buffers, falls on both alike), after one
  // untimed round each.
  const bare = new Bare();
  await bare.call("boot");
  const big = new Uint8Array(mb * 1024 * 1024).fill(7);
  const fsMbps = [];
  const floorMbps = [];
  for (let i = 0; i <= rounds; i++) {
    const t = now();
    await h.fs.writeFile("big.bin", big);
    const back = await h.fs.readFile("big.bin");
    if (back.length !== big.length) throw new Error("short read");
    const mbps = (2 * mb) / ((now() - t) / 1000);
    const floor = (await bare.call("fsFloor", { mb })).mbps;
    if (i > 0) {
      fsMbps.push(mbps);
      floorMbps.push(floor);
    }
  }
  bare.close();
  await h.fs.rm("big.bin");
  const { linksTrusted } = await stats(h); // the jail skipped realpath throughout
  h.close();
  return { fs, fsNewPath, echo: trivial, harnessEcho, fsMbps, floorMbps, linksTrusted };
}

/** h.prompt() until the model request leaves the worker: the page's fetch (the one the
 * page hands the harness) is called with it. The provider is a local scripted server,
 * which notes when each request arrives (the starts let the bench compare). */
export async function promptLatency({ baseUrl, n = 20, warm = 3 }) {
  let called = null;
  const fetchSpy = (url, init) => {
    called?.(now());
    return fetch(url, init);
  };
  const h = await createHarness({
    storage: "memory",
    fetch: fetchSpy,
    model: { api: "openai-chat", baseUrl, apiKey: "sk-bench", model: "bench" },
  });
  const samples = [],
    starts = [];
  for (let i = 0; i < warm + n; i++) {
    const left = new Promise((resolve) => (called = resolve));
    const t0 = now();
    const run = h.prompt("hi");
    const t1 = await left;
    const end = await run.done;
    if (end.stopReason !== "stop") throw new Error(`prompt ended ${JSON.stringify(end)}`);
    samples.push(t1 - t0);
    starts.push(performance.timeOrigin + t0); // wall clock, beside the server's arrivals
  }
  h.close();
  return { samples: samples.slice(warm), starts };
}

/** Removing a tree of `tree` files (10 per folder, folders nested 3 deep) in one h.fs.rm,
 * beside shutil.rmtree of the same tree in bare Pyodide. */
export async function rmTree({ tree = 1000 } = {}) {
  const h = await createHarness({ storage: "memory", model: scripted() });
  for (let d = 0; d < tree / 10; d++) {
    const dir = `t/${d % 4}/${d % 7}/d${d}`;
    await h.fs.mkdir(dir, { recursive: true });
    for (let f = 0; f < 10; f++) await h.fs.writeFile(`${dir}/f${f}.txt`, "x");
  }
  let messages = 0;
  const post = h._worker.postMessage.bind(h._worker);
  h._worker.postMessage = (m, t) => {
    messages++;
    return post(m, t);
  };
  const t0 = now();
  await h.fs.rm("t", { recursive: true });
  const ms = now() - t0;
  h._worker.postMessage = post;
  if ((await h.fs.readdir(".")).length !== 0) throw new Error("rm left files");
  h.close();

  const bare = new Bare();
  await bare.call("boot");
  const { value } = await bare.call("python", {
    code: `
import os, shutil, time
for d in range(${tree / 10}):
    path = f"/work/t/{d % 4}/{d % 7}/d{d}"
    os.makedirs(path, exist_ok=True)
    for f in range(10):
        open(f"{path}/f{f}.txt", "w").write("x")
t = time.perf_counter()
shutil.rmtree("/work/t")
(time.perf_counter() - t) * 1000
`,
  });
  bare.close();
  return { ms, messages, baselineMs: value };
}

/** Wait for the sandbox the page starts after ready; resolves with the time it took. */
export async function sandboxReady(h) {
  const t = now();
  while (h.containment.sandbox !== "ready") {
    if (h.containment.sandbox === "failed") throw new Error(`sandbox failed: ${h.containment.error}`);
    await new Promise((r) => setTimeout(r, 5));
  }
  return now() - t;
}

/** Per call, as the model feels it: a run of n calls of `command` minus the same run
 * without calls (timed as a batch: the page clock is too coarse for one short call). */
async function shellCalls(command, expect, n) {
  const calls = Array.from({ length: n }, () => ({ name: "bash", arguments: { command } }));
  const h = await createHarness({
    storage: "memory",
    model: scripted([{ toolCalls: calls }, { text: "ok" }, { text: "warm" }, { text: "none" }]),
    shell: true,
  });
  const startMs = await sandboxReady(h);
  let t = now();
  for await (const e of h.prompt("shell")) {
    if (e.type === "tool_end" && (e.output !== expect || e.isError)) throw new Error(`shell said ${e.output}`);
  }
  const withCalls = now() - t;
  await h.prompt("warm").done;
  t = now();
  await h.prompt("none").done;
  const without = now() - t;
  h.close();
  return { perCallMs: (withCalls - without) / n, startMs };
}

export async function shell({ n = 30 } = {}) {
  const command = "echo hi | wc -c";
  const { perCallMs, startMs } = await shellCalls(command, "3", n);
  const bare = new Bare();
  const base = await bare.call("bash", { command, reps: n });
  bare.close();
  return { perCallMs, baselineMs: base.batchMs / n, loadMs: startMs };
}

export async function sandboxPython({ n = 20 } = {}) {
  // `python3 -c pass` in the sandbox, beside the same runner called directly in a bare
  // worker's Python (where python3 ran before the sandbox: the harness's interpreter).
  const { perCallMs, startMs } = await shellCalls("python3 -c pass", "(no output)", n);
  const bare = new Bare();
  await bare.call("boot");
  await bare.call("loadHarness");
  // The runner is not in the harness's wheel (it runs in the sandbox): loaded from its
  // source as the sandbox loads it, into a namespace of its own.
  const source = await (await fetch("/shell/pyexec.py")).text();
  const { value } = await bare.call("python", {
    code: `
import time
namespace = {}
exec(${JSON.stringify(source)}, namespace)
run_python = namespace["run_python"]
mounts = {"/work": "/tmp", "/tmp": "/tmp"}
for _ in range(5):
    run_python(["-c", "pass"], "", "/work", 10.0, mounts)
t = time.perf_counter()
for _ in range(${n}):
    run_python(["-c", "pass"], "", "/work", 10.0, mounts)
(time.perf_counter() - t) * 1000 / ${n}
`,
  });
  bare.close();
  return { callMs: perCallMs, startMs, inHarnessMs: value };
}

/** `pip install` of the bundle's first extra package (tabulate in the repository's
 * bundle) in a fresh sandbox, then its import, each timed from tool_start to tool_end,
 * beside `python3 -c pass` in the same sandbox (the shell's own cost per call). */
export async function pipInstall() {
  const manifest = await (await fetch(new URL("manifest.json", BASE))).json();
  const name = manifest.packages?.[0]?.name;
  if (!name) throw new Error("the bundle has no extra package: build it with --package");
  const module = name.replaceAll("-", "_");
  const commands = ["python3 -c pass", `pip install ${name}`, `python3 -c 'import ${module}'`];
  const calls = commands.map((command) => ({ name: "bash", arguments: { command } }));
  const h = await createHarness({ storage: "memory", model: scripted([{ toolCalls: calls }, { text: "ok" }]), shell: true });
  await sandboxReady(h);
  const started = new Map();
  const took = [];
  for await (const e of h.prompt("pip")) {
    if (e.type === "tool_start") started.set(e.callId, now());
    if (e.type === "tool_end") {
      if (e.isError) throw new Error(`${e.output}`);
      took.push(now() - started.get(e.callId));
    }
  }
  h.close();
  return { baselineMs: took[0], installMs: took[1], importMs: took[2] };
}

export async function toolCalls({ n = 50, pairs = 5 } = {}) {
  const reads = Array.from({ length: n }, () => ({ name: "read", arguments: { path: "kb.txt" } }));
  const turns = [{ toolCalls: reads.slice(0, 5) }, { text: "warm" }]; // the first run's one-time costs
  // `pairs` pairs while the interpreter warms up (Chromium tiers the hot Wasm functions
  // of Python's interpreter up as they run), then `pairs` more for the steady state.
  for (let i = 0; i < 2 * pairs; i++) {
    // n reads then an answer, beside the same run shape without tool calls
    turns.push({ toolCalls: reads }, { text: "done" }, { text: "done" });
  }
  const h = await createHarness({ storage: "memory", model: scripted(turns) });
  await h.fs.writeFile("kb.txt", `${"x".repeat(1023)}\n`);
  await h.prompt("warm up").done;
  const withCalls = [];
  const without = [];
  for (let i = 0; i < 2 * pairs; i++) {
    let t = now();
    await h.prompt("reads").done;
    withCalls.push(now() - t);
    t = now();
    await h.prompt("no calls").done;
    without.push(now() - t);
  }
  h.close();

  const bare = new Bare();
  await bare.call("boot");
  await bare.call("loadHarness");
  const { value } = await bare.call("python", {
    code: `
import time
from harness.workspace.jail import Workspace
from harness.tools.base import ToolContext
from harness.tools.fileio import ReadParams, ReadTool
ws = Workspace("/work")
open("/work/kb.txt", "w").write("x" * 1023 + "\\n")
tool, ctx, params = ReadTool(), ToolContext(ws), ReadParams(path="kb.txt")
def read_once():
    coro = tool.run(params, ctx)
    try:
        coro.send(None)
    except StopIteration:
        pass
for _ in range(20):
    read_once()
t = time.perf_counter()
for _ in range(${n}):
    read_once()
(time.perf_counter() - t) * 1000 / ${n}
`,
  });
  bare.close();
  // Medians of the last pairs: one slow moment of the machine, spread over n calls, would
  // otherwise move the figure by as much as it measures. The first pair is the cold
  // interpreter's figure: what the first run of a page visit pays.
  const steady = (xs) => middle(xs.slice(pairs));
  return {
    withCalls,
    without,
    readMs: value,
    perCallMs: (steady(withCalls) - steady(without)) / n,
    firstPerCallMs: (withCalls[0] - without[0]) / n,
  };
}

/** The persistent workspace (OPFS write-through) beside the memory store, same page. */
export async function storage({ ops = 200, batch = 20, files = 1000 } = {}) {
  const name = `bench-${Math.random().toString(36).slice(2)}`;
  const out = {};
  // A zip of `files` 1 KB files, made once by a memory harness: one importZip writes them all.
  const maker = await createHarness({ storage: "memory", model: scripted() });
  for (let d = 0; d < 10; d++) await maker.fs.mkdir(`d${d}`);
  for (let i = 0; i < files; i++) await maker.fs.writeFile(`d${i % 10}/f${i}.txt`, "x".repeat(1024));
  const zip = await maker.fs.exportZip();
  maker.close();
  // Both stores open at once, their batches taking turns (a slow moment of the machine
  // falls on both alike).
  const kinds = ["memory", "opfs"];
  const hs = {};
  for (const kind of kinds) {
    const h = await createHarness({ storage: kind, workspace: kind === "opfs" ? name : `${name}-memory`, model: scripted() });
    if (h.storage.kind !== kind) throw new Error(`asked for ${kind}, got ${h.storage.kind}`);
    await h.fs.writeFile("kb.bin", new Uint8Array(1024));
    hs[kind] = h;
  }
  const io = {};
  for (const kind of kinds) {
    const h = hs[kind];
    let i = 0;
    Object.assign(io, {
      [`${kind}Read`]: () => h.fs.readFile("kb.bin"),
      [`${kind}Write`]: () => h.fs.writeFile(`w${i++ % 50}.bin`, new Uint8Array(1024)),
    });
  }
  Object.assign(out, await interleaved(ops, batch, io));
  const lookups = {};
  for (const kind of kinds) {
    const h = hs[kind];
    Object.assign(lookups, {
      [`${kind}Stat`]: () => h.fs.stat("kb.bin"),
      [`${kind}Readdir`]: () => h.fs.readdir("/work"), // 51 entries
    });
  }
  Object.assign(out, await interleaved(ops, batch, lookups));
  for (const kind of kinds) {
    const t = now();
    await hs[kind].fs.importZip(zip);
    out[`${kind}ImportMs`] = now() - t;
    hs[kind].close();
    out[`${kind}ToolMs`] = await thousandFilesTool(kind, `${name}-tool`, files);
  }
  // Restore: boot the OPFS workspace that now holds the files, beside an empty one.
  const steps = async (workspace) => {
    const s = {};
    const h = await createHarness({ storage: "opfs", workspace, model: scripted(), onProgress: (p) => (s[`${p.step}_${p.state}`] = p.ms) });
    const restored = h.storage.restoredFiles;
    h.close();
    await new Promise((r) => setTimeout(r, 100)); // the lock goes with the worker
    return { ms: s.storage_done - s.storage_start, restored };
  };
  const full = await steps(name);
  const empty = await steps(`${name}-empty`);
  if (full.restored < files) throw new Error(`restored ${full.restored} of ${files} files`);
  out.restoreMs = full.ms;
  out.emptyOpenMs = empty.ms;
  await deleteWorkspace(name);
  await deleteWorkspace(`${name}-empty`);
  await deleteWorkspace(`${name}-tool`);
  return out;
}

/** One tool call of the model that writes `files` 1 KB files (python3 in the shell):
 * tool_start to tool_end, which leaves only once they are all on disk. */
async function thousandFilesTool(kind, workspace, files) {
  const command = `python3 -c 'import os; os.makedirs("t", exist_ok=True); [open(f"t/f{i}.txt", "w").write("x" * 1024) for i in range(${files})]'`;
  const h = await createHarness({
    storage: kind,
    workspace,
    shell: true,
    model: scripted([
      { toolCalls: [{ name: "bash", arguments: { command: "true" } }] }, // the sandbox is up
      { toolCalls: [{ name: "bash", arguments: { command } }] },
      { text: "done" },
    ]),
  });
  const marks = [];
  for await (const e of h.prompt("write them")) {
    if (e.type === "tool_start" || e.type === "tool_end") marks.push(now());
    if (e.type === "tool_end" && e.isError) throw new Error(`the tool failed: ${e.output}`);
  }
  const written = (await h.fs.readdir("t")).length;
  h.close();
  await new Promise((r) => setTimeout(r, 100)); // the lock goes with the worker
  if (written !== files) throw new Error(`the tool wrote ${written} of ${files} files`);
  return marks[3] - marks[2];
}

/** What a checkpoint costs (docs/performance.md): a 1 KB `write` over an existing file
 * and a python3 call rewriting `files` existing 1 KB files, each with checkpoints on and
 * off (tool_start to tool_end; then the run's end, until the harness answers again), and
 * the revert of that python3 run. Memory storage: the checkpoint's own cost, not OPFS's. */
export async function checkpointCosts({ files = 1000 } = {}) {
  const rewrite = (text) =>
    `python3 -c 'import os; os.makedirs("t", exist_ok=True); [open(f"t/f{i}.txt", "w").write("${text}" * 1024) for i in range(${files})]'`;
  const out = {};
  for (const on of [true, false]) {
    const h = await createHarness({
      storage: "memory",
      shell: true,
      checkpoints: on,
      model: scripted([
        { toolCalls: [{ name: "bash", arguments: { command: rewrite("x") } }] },
        { text: "made" },
        { toolCalls: [{ name: "bash", arguments: { command: rewrite("y") } }] },
        { text: "rewritten" },
        { toolCalls: [{ name: "read", arguments: { path: "t/f0.txt" } }] },
        { toolCalls: [{ name: "write", arguments: { path: "t/f0.txt", content: "z".repeat(1024) } }] },
        { text: "written" },
      ]),
    });
    const timed = async (text) => {
      const marks = {};
      const run = h.prompt(text);
      for await (const e of run) {
        if (e.type === "tool_start") marks.start = now();
        if (e.type === "tool_end") {
          marks.end = now();
          if (e.isError) throw new Error(`the tool failed: ${e.output}`);
        }
      }
      const ended = now();
      await h.fs.stat("t"); // answered once the run's end (its checkpoint) is done
      return { toolMs: marks.end - marks.start, endMs: now() - ended, run };
    };
    await timed("make them");
    const python = await timed("rewrite them");
    const write = await timed("write one");
    const key = on ? "on" : "off";
    out[`python_${key}_ms`] = python.toolMs;
    out[`python_end_${key}_ms`] = python.endMs;
    out[`write_${key}_ms`] = write.toolMs;
    out[`write_end_${key}_ms`] = write.endMs;
    if (on) {
      await h.revert(write.run.id);
      const t0 = now();
      const { changes } = await h.revert(python.run.id);
      out.revert_ms = now() - t0;
      if (changes.length !== files) throw new Error(`the revert changed ${changes.length} of ${files} files`);
    }
    h.close();
  }
  return out;
}

/** What budget checks cost per model request (docs/performance.md): the same run of `n`
 * model requests (each but the last a `read` of a 1 KB file, each reporting usage) with
 * every budget limit set at every scope and prices to count cost, beside no budget
 * (h.setBudget between the runs, one harness). */
export async function budgetChecks({ n = 20, pairs = 5 } = {}) {
  const usage = { inputTokens: 1000, outputTokens: 100 };
  const call = { usage, toolCalls: [{ name: "read", arguments: { path: "kb.txt" } }] };
  const run = [...Array(n - 1).fill(call), { text: "done", usage }];
  const turns = Array.from({ length: 2 * pairs + 2 }, () => run).flat();
  const limits = { tokens: 1e12, cost: 1e9, requests: 1e6, toolCalls: 1e6, timeMs: 3_600_000 };
  const budget = { run: limits, thread: limits, harness: limits };
  const h = await createHarness({ storage: "memory", model: { ...scripted(turns), prices: { input: 1, output: 2 } } });
  await h.fs.writeFile("kb.txt", `${"x".repeat(1023)}\n`);
  await h.setBudget(budget);
  await h.prompt("warm up, budgeted").done;
  await h.setBudget(null);
  await h.prompt("warm up").done;
  const withBudget = [];
  const without = [];
  for (let i = 0; i < pairs; i++) {
    await h.setBudget(budget);
    let t = now();
    const done = await h.prompt("budgeted").done;
    withBudget.push((now() - t) / n);
    if (done.stopReason !== "stop" || done.usage.requests !== n) throw new Error(`budgetChecks: ${JSON.stringify(done)}`);
    await h.setBudget(null);
    t = now();
    await h.prompt("unbudgeted").done;
    without.push((now() - t) / n);
  }
  h.close();
  return { withBudget, without };
}

/** What a subagent adds to a one-tool-call task (docs/performance.md): a run whose model
 * delegates one `read` of a 1 KB file to a subagent (the task call, the subagent's two
 * requests, the parent's answer), beside a run that makes the same call itself. */
export async function subagentOverhead({ pairs = 5 } = {}) {
  const read = { name: "read", arguments: { path: "kb.txt" } };
  const direct = [{ toolCalls: [read] }, { text: "done" }];
  const delegated = [
    { toolCalls: [{ name: "task", arguments: { prompt: "read kb.txt" } }] },
    { toolCalls: [read] },
    { text: "read it" },
    { text: "done" },
  ];
  const turns = Array.from({ length: pairs + 1 }, () => [...delegated, ...direct]).flat();
  const h = await createHarness({ storage: "memory", subagents: true, model: scripted(turns) });
  await h.fs.writeFile("kb.txt", `${"x".repeat(1023)}\n`);
  await h.prompt("warm up, delegated").done;
  await h.prompt("warm up").done;
  const withSubagent = [];
  const inParent = [];
  for (let i = 0; i < pairs; i++) {
    let t = now();
    const done = await h.prompt("delegate the read").done;
    withSubagent.push(now() - t);
    if (done.stopReason !== "stop" || done.usage.requests !== 4) throw new Error(`subagentOverhead: ${JSON.stringify(done)}`);
    t = now();
    await h.prompt("read it yourself").done;
    inParent.push(now() - t);
  }
  h.close();
  return { withSubagent, inParent };
}

/** The preview (h.preview): from a tool call writing index.html to the site's load event,
 * and from a one-file change to the reloaded site's load event (the reload waits out its
 * 150 ms debounce), beside a bare iframe loading the same files (site/) from this static
 * server (its HTTP cache warm after the first load, as a dev server's would be). */
export async function previewLoad({ pairs = 5 } = {}) {
  const names = ["style.css", "base.css", "logo.svg", "lib.mjs", "app.mjs", "data.json", "index.html"];
  const files = Object.fromEntries(await Promise.all(names.map(async (n) => [n, await (await fetch(`site/${n}`)).text()])));
  const write = { name: "write", arguments: { path: "site/index.html", content: files["index.html"] } };
  const turns = Array.from({ length: pairs + 1 }, () => [{ toolCalls: [write] }, { text: "done" }]).flat();
  const h = await createHarness({ storage: "memory", model: scripted(turns) });
  await h.fs.mkdir("site");
  for (const n of names.slice(0, -1)) await h.fs.writeFile(`site/${n}`, files[n]);
  const box = document.createElement("div");
  box.style.cssText = "width:640px;height:420px";
  document.body.append(box);
  const preview = h.preview({ root: "site" });
  box.append(preview.element);
  /** Resolves with the page's clock at the next load event (after `since`). */
  const nextLoad = (since) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`previewLoad: no load: ${JSON.stringify(preview.entries)}`)), 30_000);
      const check = () => {
        if (preview.loadEventAt > since) {
          stop();
          clearTimeout(timer);
          resolve(preview.loadEventAt);
        }
      };
      const stop = preview.subscribe(check);
      const poll = setInterval(() => {
        check();
        if (preview.loadEventAt > since) clearInterval(poll);
      }, 5);
    });
  const written = [];
  const changed = [];
  for (let i = 0; i <= pairs; i++) {
    // a tool call writes index.html: from its tool_end to the site's load event
    let t = 0;
    const run = h.prompt("write the page");
    for await (const e of run) if (e.type === "tool_end") t = now();
    written.push((await nextLoad(t)) - t);
    // one file changes: from the write to the reloaded site's load event
    t = now();
    await h.fs.writeFile("site/style.css", `${files["style.css"]}/* ${i} */\n`);
    changed.push((await nextLoad(t)) - t);
  }
  preview.close();
  h.close();
  // the baseline: a bare iframe of the same files from the static server
  const bare = [];
  const bareReload = [];
  const frame = document.createElement("iframe");
  frame.style.cssText = "width:640px;height:420px;border:0";
  box.replaceChildren(frame);
  const loaded = () => new Promise((resolve) => frame.addEventListener("load", () => resolve(now()), { once: true }));
  for (let i = 0; i <= pairs; i++) {
    let t = now();
    let done = loaded();
    frame.src = `site/index.html?load=${i}`;
    bare.push((await done) - t);
    t = now();
    done = loaded();
    frame.contentWindow.location.reload();
    bareReload.push((await done) - t);
  }
  box.remove();
  // the first of each is a warm-up (the loader's first fetch, the server's first reads)
  return { written: written.slice(1), changed: changed.slice(1), bare: bare.slice(1), bareReload: bareReload.slice(1) };
}

/** The content of file `i` of the git step's tree (tooling/bench/git.py writes the same
 * for the host's git): 30 lines; a changed one has its line 10 rewritten. */
const gitFile = (i, changed = false) =>
  Array.from({ length: 30 }, (_, j) => (changed && j === 10 ? `line ${j} of file ${i}, changed\n` : `line ${j} of file ${i}\n`)).join("");

/** git in the shell on a repository of `files` files with `changed` of them changed by the
 * page: `git status --short` (the first of a run: a fresh sandbox, every file hashed
 * again; and a second), `git diff`, `git commit -qam`, each from tool_start to tool_end,
 * beside `true` in the same run (what any command costs). */
export async function gitOps({ files = 1000, changed = 10, reps = 3 } = {}) {
  const commands = ["true", "true", "git status --short", "git status --short", "git diff", "git commit -qam ten"];
  const setup = { toolCalls: [{ name: "bash", arguments: { command: "git init -q && git add -A && git commit -qm base" } }] };
  const measure = { toolCalls: commands.map((command) => ({ name: "bash", arguments: { command } })) };
  const turns = [setup, { text: "made" }, ...Array.from({ length: reps }, () => [measure, { text: "ok" }]).flat()];
  const h = await createHarness({ storage: "memory", shell: true, model: scripted(turns) });
  for (let i = 0; i < files; i++) {
    if (i % 20 === 0) await h.fs.mkdir(`src/d${i / 20}`, { recursive: true });
    await h.fs.writeFile(`src/d${Math.floor(i / 20)}/f${i}.txt`, gitFile(i));
  }
  await sandboxReady(h);
  for await (const e of h.prompt("make the repository")) if (e.type === "tool_end" && e.isError) throw new Error(`git: ${e.output}`);
  const samples = { true: [], status: [], statusAgain: [], diff: [], commit: [] };
  for (let r = 0; r < reps; r++) {
    for (let i = 0; i < changed; i++) {
      const n = (i * 37) % files;
      await h.fs.writeFile(`src/d${Math.floor(n / 20)}/f${n}.txt`, gitFile(n, r % 2 === 0));
    }
    const took = [];
    const outputs = [];
    let t = 0;
    for await (const e of h.prompt("git")) {
      if (e.type === "tool_start") t = now();
      if (e.type === "tool_end") {
        if (e.isError) throw new Error(`git: ${e.output}`);
        took.push(now() - t);
        outputs.push(e.output);
      }
    }
    if (outputs[2].split("\n").length !== changed) throw new Error(`git status: ${outputs[2]}`);
    samples.true.push(took[1]);
    samples.status.push(took[2]);
    samples.statusAgain.push(took[3]);
    samples.diff.push(took[4]);
    samples.commit.push(took[5]);
  }
  h.close();
  return samples;
}
