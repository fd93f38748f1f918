// The page code of e2e/test_robustness.py's rows, one export per row, on
// e2e/pages/index.html; called from Python by e2e/conftest.py's call(). Each returns JSON
// values for the row's assertions, which stay in Python.

/** The page's helpers (index.html): the module, boot with the scripted model, settle a promise into {ok, ...}. */
const { pyharness, boot, settle } = window;

/** Boot with these scripted turns and options, prompt once (its tool_end events, result and time), then again. */
export async function runTurns(turns, options) {
  const h = await boot({ model: { api: "scripted", turns }, ...options });
  const t0 = performance.now();
  const run = h.prompt("go");
  const ends = [];
  for await (const e of run) if (e.type === "tool_end") ends.push({ output: e.output, isError: e.isError });
  const done = await run.done;
  const ms = performance.now() - t0;
  const next = await h.prompt("again").done;
  h.close();
  return { ends, done, next, ms };
}

/** Three prompts with this model (the second a lone surrogate) and the file names it left. */
export async function loneSurrogates(model) {
  const h = await boot({ model });
  const first = await h.prompt("write it").done;
  const second = await h.prompt("\ud800").done;
  const third = await h.prompt("ok?").done;
  const files = (await h.fs.readdir("/work")).map((e) => e.name);
  h.close();
  return { first, second, third, files };
}

/** A 1000-character name and a 2000-deep mkdir from the page (settled), a listing, and a tool's 3000-deep write. */
export async function longNamesAndDeepPaths() {
  const h = await boot({
    model: {
      api: "scripted",
      turns: [{ toolCalls: [{ name: "write", arguments: { path: `${"d/".repeat(3000)}f.txt`, content: "x" } }] }, { text: "done" }],
    },
  });
  const long = await settle(h.fs.writeFile("a".repeat(1000), "x"));
  const deep = await settle(h.fs.mkdir("d/".repeat(2000), { recursive: true }));
  const listing = await settle(h.fs.readdir("/work"));
  const ends = [];
  for await (const e of h.prompt("deep")) if (e.type === "tool_end") ends.push(e);
  h.close();
  return { long, deep, listing, ends };
}

/** createHarness with a circular and a BigInt option (settled), and how many workers it started. */
export async function optionsThatAreNotJson() {
  let workers = 0;
  const W = window.Worker;
  window.Worker = class extends W {
    constructor(...a) {
      super(...a);
      workers++;
    }
  };
  const circular = {};
  circular.self = circular;
  const a = await settle(pyharness.createHarness({ model: { api: "scripted", turns: [] }, systemPrompt: circular }));
  const b = await settle(pyharness.createHarness({ model: { api: "scripted", turns: [] }, maxSteps: 10n }));
  window.Worker = W;
  return { a, b, workers };
}

/** Abort a boot as this step starts: its settled result, and how long after the abort it settled. */
export async function abortAtStep(step) {
  const controller = new AbortController();
  let at = 0;
  const booting = pyharness.createHarness({
    model: { api: "scripted", turns: [] },
    signal: controller.signal,
    onProgress: (p) => {
      if (p.step === step && p.state === "start") {
        at = performance.now();
        controller.abort();
      }
    },
  });
  const result = await settle(booting);
  return { result, ms: performance.now() - at };
}

/** close() during a run, a page tool's call, fs calls and a shell command: per phase, how long the pending promises took to settle, their codes, and the iframes left. */
export async function closeInEveryPhase() {
  const never = { name: "wait", run: () => new Promise(() => {}) };
  const out = {};
  const phase = async (name, turns, opts, start, trigger) => {
    const h = await boot({ model: { api: "scripted", turns }, ...opts });
    if (opts.shell) while (h.containment.sandbox !== "ready") await new Promise((r) => setTimeout(r, 20));
    const run = h.prompt("go");
    for await (const e of run) if (e.type === trigger) break;
    const pending = start(h); // in flight when close() comes
    const t = performance.now();
    h.close();
    const settled = await Promise.all([settle(run.done), ...pending.map(settle)]);
    out[name] = { ms: performance.now() - t, codes: settled.map((s) => s.code), frames: document.querySelectorAll("iframe").length };
  };
  await phase("run", [{ text: "slow text", delayMs: 2000 }], {}, () => [], "run_start");
  await phase("page tool", [{ toolCalls: [{ name: "wait", arguments: {} }] }], { tools: [never] }, () => [], "tool_start");
  await phase("fs call", [{ text: "x", delayMs: 2000 }], {}, (h) => [h.fs.readFile("nope"), h.fs.writeFile("a", "b")], "run_start");
  await phase(
    "shell",
    [{ toolCalls: [{ name: "bash", arguments: { command: "python3 -c 'while True: pass'" } }] }],
    { shell: { timeoutMs: 60000 } },
    () => [],
    "tool_start",
  );
  return out;
}

/** Odd values, message types and fs requests the fuzz below draws from. */
// biome-ignore format: a few values a line read better than one
const values = [null, undefined, 0, -1, 1e308, NaN, "", "x".repeat(5000), "\ud800", [], {}, [[[[]]]],
  { path: "../../etc" }, true, new ArrayBuffer(3), "fs", "prompt", 2 ** 53];
// biome-ignore format: a few values a line read better than one
const types = ["fs", "prompt", "cancel", "echo", "stats", "toolres", "fetch_head", "fetch_chunk",
  "fetch_end", "fetch_error", "netres", "sandbox_port", "init", "nope", 5, null];
const requests = [
  '{"op": "readFile"}',
  '{"op": "stat", "path": 5}',
  '{"op": "nope", "path": "a"}',
  "{",
  '{"op": "writeFile", "path": "x", "append": "yes"}',
  "[".repeat(100000),
  `{"op": "readdir", "path": "${"a/".repeat(3000)}"}`,
  '{"op": "rename", "from": "/work", "to": "x"}',
  '{"op": "rm", "path": "/", "recursive": true}',
  '"\ud800"',
];

/**
 * 10,000 seeded malformed messages into the worker (fs ones with ids from 1e6, whose replies are
 * counted) and 10,000 into the page's handler as if from the worker; then whether the harness still
 * writes, reads and ends a run with a typed result.
 */
export async function malformedMessagesEachWay() {
  const h = await boot();
  const replies = new Map();
  const receive = h._worker.onmessage;
  h._worker.onmessage = (event) => {
    const id = event.data?.id;
    if (typeof id === "number" && id >= 1e6) replies.set(id, (replies.get(id) || 0) + 1);
    receive(event);
  };
  let seed = 7;
  const rand = (n) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  let fsIds = [];
  for (let i = 0; i < 10000; i++) {
    const type = types[rand(types.length)];
    const message = { type };
    for (const key of ["id", "runId", "text", "data", "request", "ok", "output", "status", "port"]) {
      if (rand(3) === 0) message[key] = values[rand(values.length)];
    }
    if (type === "fs") {
      message.id = 1e6 + i;
      message.request = rand(4) ? requests[rand(requests.length)] : values[rand(values.length)];
      fsIds.push(message.id);
    }
    if (type === "prompt" || type === "init" || type === "sandbox_port") delete message.port;
    try {
      h._worker.postMessage(message);
    } catch {
      fsIds = fsIds.filter((x) => x !== message.id);
    }
  }
  // ... and 10,000 into the page, as if the worker sent them
  for (let i = 0; i < 10000; i++) {
    const message = rand(10) === 0 ? values[rand(values.length)] : { type: types[rand(types.length)] };
    if (message && typeof message === "object" && !Array.isArray(message)) {
      for (const key of ["id", "event", "runId", "step", "tools", "url", "name", "input"]) {
        if (rand(3) === 0) message[key] = values[rand(values.length)];
      }
      if (rand(5) === 0) message.type = ["fsres", "event", "ready", "toolcall", "fetch", "netfetch", "boot_error"][rand(7)];
    }
    receive({ data: message });
  }
  await h.fs.writeFile("still.txt", "usable");
  const still = await h.fs.readFile("still.txt", "utf8");
  const counts = fsIds.map((id) => replies.get(id) || 0);
  const done = await h.prompt("hi").done;
  h.close();
  return {
    still,
    sent: fsIds.length,
    once: counts.every((c) => c === 1),
    missing: counts.filter((c) => c !== 1).length,
    diagnostics: h.diagnostics.length,
    done,
  };
}
