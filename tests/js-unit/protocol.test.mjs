// embed/shared/protocol.mjs: well-formed messages pass, and each malformed, unknown or
// out-of-turn one is dropped with its code.
import assert from "node:assert/strict";
import { test } from "node:test";
import { CODE, check, DIAGNOSTICS, fsRequest, PROTOCOL, receiver, SANDBOX_CODES } from "../../embed/shared/protocol.mjs";

const yes = () => true;
const no = () => false;
/** Every condition of a channel answering `answer` (or per-name overrides). */
const all = (channel, answer = yes, overrides = {}) => {
  const out = {};
  for (const entry of Object.values(PROTOCOL[channel].types)) {
    for (const [name] of [...entry.when, ...entry.accept]) out[name] = answer;
  }
  return { ...out, ...overrides };
};
const codeOf = (channel, message, conditions = all(channel)) => check(channel, message, conditions)?.code;

test("well-formed messages of every direction pass", () => {
  const port = new MessageChannel().port1;
  const ok = {
    pageToWorker: [
      { type: "init", baseUrl: "https://x/", config: {}, storage: { kind: "auto" } },
      { type: "fs", id: 1, request: '{"op":"stat","path":"a"}' },
      { type: "fs", id: 2, request: "{}", data: new ArrayBuffer(1) },
      { type: "threads", id: 3, request: '{"op":"list"}' },
      { type: "prompt", runId: "run-1", text: "hi" },
      { type: "cancel" },
      { type: "cancel", runId: "run-1" },
      { type: "toolres", id: 1, ok: true, output: "x" },
      { type: "approvalres", id: 1, decision: "once" },
      { type: "checkpoint", id: 5, request: '{"op":"list"}' },
      { type: "usage", id: 6, request: '{"op":"usage"}' },
      { type: "preview", id: 7, request: '{"op":"read","path":"site/index.html"}' },
      { type: "approvalres", id: 1, decision: "deny", message: "not now" },
      { type: "fs", id: 4, request: "{}", call: 2 },
      { type: "fetch_head", id: 1, status: 200, headers: {} },
      { type: "fetch_chunk", id: 1, data: new ArrayBuffer(2) },
      { type: "fetch_end", id: 1 },
      { type: "fetch_error", id: 1, message: "broke" },
      { type: "sandbox_port", port, generation: 2, reason: "boot" },
      { type: "netres", id: 1, error: "refused" },
      { type: "netres", id: 1, status: 200, statusText: "OK", headers: {}, body: new ArrayBuffer(0), url: "https://a/" },
      { type: "echo", id: 1 },
      { type: "stats", id: 1 },
    ],
    workerToPage: [
      { type: "progress", step: "runtime", state: "start", ms: 3 },
      { type: "ready", versions: {}, tools: [], workerCsp: false, storage: { kind: "memory" } },
      { type: "boot_error", step: "runtime", message: "no" },
      { type: "fsres", id: 1, ok: true, value: null },
      { type: "fsres", id: 1, ok: true, data: new ArrayBuffer(1) },
      { type: "fsres", id: 1, ok: false, code: "ENOENT", message: "ENOENT: x" },
      { type: "threadsres", id: 1, ok: true, value: [] },
      { type: "checkpointres", id: 1, ok: false, code: "ECONFLICT", message: "ECONFLICT: a" },
      { type: "usageres", id: 1, ok: true, value: { harness: {}, thread: {} } },
      { type: "previewres", id: 1, ok: true, value: null, data: new ArrayBuffer(1) },
      { type: "previewres", id: 1, ok: false, code: "EACCES", message: "EACCES: a read rule" },
      { type: "echo", id: 1, wasmBytes: 1, jsHeapBytes: null, linksTrusted: true },
      { type: "event", event: { type: "run_start", runId: "r", seq: 0 } },
      {
        type: "file_changes",
        events: [
          { type: "file_change", runId: null, seq: 0, path: "/work/a", kind: "created", entry: "file", size: 1 },
          { type: "file_change", runId: null, seq: 1, path: "/work/b", kind: "deleted", entry: "file", size: null },
        ],
      },
      { type: "storage", error: null },
      { type: "storage", error: { code: "ENOSPC", message: "full" } },
      { type: "workspace_taken", saved: true },
      { type: "toolcall", id: 1, name: "t", input: "{}" },
      { type: "toolcancel", id: 1 },
      { type: "approval", id: 1, request: { callId: "call_1", tool: "write", input: {}, rule: "write" } },
      { type: "approvalcancel", id: 1 },
      { type: "fetch", id: 1, url: "https://a/v1/chat/completions", method: "POST", headers: {}, body: "{}" },
      { type: "fetch_abort", id: 1 },
      { type: "netfetch", id: 1, command: "ab", url: "https://a/", method: "GET", headers: {}, body: null },
      { type: "sandbox_restart", reason: "recycled", generation: 1 },
      { type: "sandbox_deadline", generation: 1, command: "ab", ms: 2250 },
      { type: "sandbox_done", generation: 1, command: "ab" },
      { type: "sandbox_dropped", code: "sandbox_spoke", message: "x" },
      { type: "protocol_error", code: "malformed", message: "x" },
    ],
    harnessToSandbox: [
      { type: "run", nonce: "n", command: "ls", limits: {}, sync: {} },
      { type: "cancel", nonce: "n" },
      { type: "net_result", id: 1, error: "no" },
      { type: "gate_result", id: 2, refusal: "denied" },
    ],
    sandboxToHarness: [
      { type: "ready", ms: 1, probes: {} },
      { type: "boot_error", message: "x" },
      { type: "result", nonce: "n", error: "x" },
      {
        type: "result",
        nonce: "n",
        stdout: "",
        stderr: "",
        exitCode: 0,
        timedOut: false,
        changes: { dirs: [], removed: [], skipped: [], files: [{ path: "/work/a", data: new Uint8Array(1) }] },
      },
      { type: "net", id: 1, url: "https://a/", method: "GET", headers: {}, body: null },
      { type: "pkg", id: 2, file: "tabulate-0.10.0-py3-none-any.whl" },
      { type: "gate", id: 3, command: "rm x", argv: ["rm", "x"] },
      { type: "restored", nonce: "n" },
    ],
    pageToFrame: [{ type: "boot", files: {}, port, probeUrl: "https://x/manifest.json" }],
    frameToPage: [{ type: "frame_ready" }, { type: "ready", ms: 1, probes: {} }, { type: "boot_error", message: "x" }],
  };
  for (const [channel, messages] of Object.entries(ok)) {
    for (const message of messages) assert.equal(check(channel, message, all(channel)), null, `${channel} ${JSON.stringify(message)}`);
    // every type of the channel is covered by this test
    assert.deepEqual(new Set(messages.map((m) => m.type)), new Set(Object.keys(PROTOCOL[channel].types)), channel);
  }
  port.close();
});

test("not an object, or no string type: the channel's malformed code", () => {
  for (const message of [null, undefined, 5, "fs", [], {}, { type: 5 }]) {
    assert.equal(codeOf("workerToPage", message), CODE.MALFORMED);
    assert.equal(codeOf("pageToWorker", message), CODE.MALFORMED);
    assert.equal(codeOf("sandboxToHarness", message), CODE.SANDBOX_MALFORMED);
    assert.equal(check("harnessToSandbox", message)?.code, null); // ignored
  }
});

test("an unknown type: unknown_type (or sandbox_malformed), also for inherited names", () => {
  for (const type of ["nope", "toString", "__proto__", "constructor"]) {
    assert.equal(codeOf("workerToPage", { type }), CODE.UNKNOWN_TYPE);
    assert.equal(codeOf("pageToWorker", { type }), CODE.UNKNOWN_TYPE);
    assert.equal(codeOf("sandboxToHarness", { type }), CODE.SANDBOX_MALFORMED);
  }
});

test("wrong fields get the entry's code, naming the field", () => {
  const wrong = [
    ["pageToWorker", { type: "fs", id: "1", request: "{}" }, CODE.MALFORMED, "'id'"],
    ["pageToWorker", { type: "fs", id: 1, request: {} }, CODE.MALFORMED, "'request'"],
    ["pageToWorker", { type: "fs", id: 1, request: "{}", data: "bytes" }, CODE.MALFORMED, "'data'"],
    ["pageToWorker", { type: "prompt", runId: "r".repeat(201), text: "x" }, CODE.MALFORMED, "'runId'"],
    ["pageToWorker", { type: "netres", id: 1 }, CODE.MALFORMED, "'error'"],
    ["pageToWorker", { type: "netres", id: 1, status: 200, headers: {}, body: "text", statusText: "", url: "" }, CODE.MALFORMED, "'body'"],
    ["pageToWorker", { type: "netres", id: 1, error: 5 }, CODE.MALFORMED, "'error'"],
    ["workerToPage", { type: "event", event: "x" }, CODE.MALFORMED_EVENT, "'event'"],
    ["workerToPage", { type: "event", event: { type: "run_end", runId: 5 } }, CODE.MALFORMED_EVENT, "'event.runId'"],
    ["workerToPage", { type: "fetch", id: 1, url: 5, method: "POST", headers: {} }, CODE.REFUSED_FETCH, "'url'"],
    ["workerToPage", { type: "toolcall", id: 1, name: 5, input: "{}" }, CODE.UNEXPECTED_TOOLCALL, "'name'"],
    ["workerToPage", { type: "storage", error: { code: "EPERM", message: "x" } }, CODE.MALFORMED, "'error.code'"],
    ["workerToPage", { type: "sandbox_deadline", generation: 1, command: "n", ms: -1 }, CODE.MALFORMED, "'ms'"],
    ["workerToPage", { type: "sandbox_deadline", generation: 1, command: "n", ms: Infinity }, CODE.MALFORMED, "'ms'"],
    ["workerToPage", { type: "sandbox_dropped", code: "unexpected_ready", message: "x" }, CODE.MALFORMED, "'code'"],
    ["workerToPage", { type: "fsres", id: 1, ok: "yes" }, CODE.MALFORMED, "'ok'"],
    ["sandboxToHarness", { type: "result", nonce: "n", changes: { files: "nope" } }, null, "'stdout'"],
    [
      "sandboxToHarness",
      {
        type: "result",
        nonce: "n",
        stdout: "",
        stderr: "",
        exitCode: 0,
        timedOut: false,
        changes: { dirs: [], removed: [], skipped: [], files: [{ path: "a", data: "x" }] },
      },
      null,
      "'changes.files[0].data'",
    ],
  ];
  for (const [channel, message, code, field] of wrong) {
    const problem = check(channel, message, all(channel));
    assert.equal(problem?.code, code, JSON.stringify(message));
    assert.equal(problem.condition, "fields");
    assert.ok(problem.reason.includes(field), `${problem.reason} names ${field}`);
  }
});

test("a long list is checked whole and its problem names the element", () => {
  const events = Array.from({ length: 10_000 }, (_, i) => ({ type: "file_change", seq: i, path: `d/f${i}.txt`, kind: "created" }));
  const message = { type: "file_changes", events };
  assert.equal(check("workerToPage", message, all("workerToPage")), null);
  for (const [at, bad, field] of [
    [7_331, { ...events[7_331], kind: "moved" }, "'events[7331].kind'"],
    [9_999, { ...events[9_999], seq: 1.5 }, "'events[9999].seq'"],
    [0, null, "'events[0]'"],
  ]) {
    const broken = [...events];
    broken[at] = bad;
    const problem = check("workerToPage", { ...message, events: broken }, all("workerToPage"));
    assert.equal(problem?.condition, "fields");
    assert.ok(problem.reason.includes(field), `${problem.reason} names ${field}`);
  }
  // a hole in a list (structured clone keeps them) is an element that is missing
  const sparse = [...events];
  delete sparse[5];
  assert.ok(check("workerToPage", { ...message, events: sparse }, all("workerToPage"))?.reason.includes("'events[5]'"));
});

test("out of turn: the code of the first condition that fails, state before fields", () => {
  // a second ready is unexpected_ready, however it is shaped
  assert.equal(codeOf("workerToPage", { type: "ready", versions: { pyharness: "evil" } }, all("workerToPage", no)), CODE.UNEXPECTED_READY);
  assert.equal(codeOf("workerToPage", { type: "progress" }, all("workerToPage", no)), CODE.UNEXPECTED_PROGRESS);
  assert.equal(codeOf("workerToPage", { type: "boot_error" }, all("workerToPage", no)), CODE.UNEXPECTED_BOOT_ERROR);
  assert.equal(codeOf("workerToPage", { type: "fsres", id: 9 }, all("workerToPage", no)), CODE.UNEXPECTED_REPLY);
  assert.equal(codeOf("workerToPage", { type: "storage", error: null }, all("workerToPage", no)), CODE.UNEXPECTED_STORAGE);
  assert.equal(codeOf("workerToPage", { type: "sandbox_done" }, all("workerToPage", no)), CODE.UNEXPECTED_SANDBOX_RESTART);
  // toolcall: before ready, outside a run (before its fields), unknown tool, duplicate id
  const call = { type: "toolcall", id: 1, name: "t", input: "{}" };
  const on = all("workerToPage");
  assert.equal(codeOf("workerToPage", call, { ...on, ready: no }), CODE.UNEXPECTED_REQUEST);
  assert.equal(check("workerToPage", { type: "toolcall" }, { ...on, inRun: no }).condition, "inRun");
  assert.equal(check("workerToPage", call, { ...on, knownTool: no }).condition, "knownTool");
  assert.equal(check("workerToPage", call, { ...on, newToolId: no }).code, CODE.UNEXPECTED_TOOLCALL);
  // an event for another run, or out of seq
  const event = { type: "event", event: { type: "run_end", runId: "r", seq: 7 } };
  assert.equal(codeOf("workerToPage", event, { ...on, nextEvent: no }), CODE.UNEXPECTED_EVENT);
  // fetch to another URL
  const fetch = { type: "fetch", id: 1, url: "https://evil/", method: "POST", headers: {}, body: "x" };
  assert.equal(codeOf("workerToPage", fetch, { ...on, modelEndpoint: no }), CODE.REFUSED_FETCH);
  assert.equal(codeOf("workerToPage", fetch, { ...on, ready: no }), CODE.UNEXPECTED_REQUEST);
  // the worker: a netres nobody asked for; a prompt before ready; late answers are quiet
  const w = all("pageToWorker");
  assert.equal(codeOf("pageToWorker", { type: "netres", id: 4, error: "x" }, { ...w, netPending: no }), CODE.UNEXPECTED_REPLY);
  assert.equal(codeOf("pageToWorker", { type: "prompt", runId: "r", text: "x" }, { ...w, ready: no }), CODE.UNEXPECTED_REQUEST);
  assert.equal(codeOf("pageToWorker", { type: "sandbox_port" }, { ...w, shell: no }), CODE.UNEXPECTED_SANDBOX_PORT);
  for (const type of ["toolres", "fetch_head", "fetch_chunk", "fetch_end", "fetch_error"]) {
    const problem = check("pageToWorker", { type, id: 1 }, all("pageToWorker", no));
    assert.ok(problem !== null && problem.code === null, type);
  }
  // the sandbox: a result while idle, with another nonce; a ready during a command
  const s = all("sandboxToHarness");
  const result = { type: "result", nonce: "other", error: "x" };
  assert.equal(codeOf("sandboxToHarness", result, { ...s, command: no }), CODE.SANDBOX_SPOKE);
  assert.equal(codeOf("sandboxToHarness", result, { ...s, ourNonce: no }), CODE.SANDBOX_FORGED);
  assert.equal(codeOf("sandboxToHarness", { type: "ready" }, { ...s, sandboxBooting: no }), CODE.SANDBOX_MALFORMED);
});

test("receiver() dispatches checked messages to their handler and drops the rest", () => {
  const seen = [];
  const handlers = Object.fromEntries(Object.keys(PROTOCOL.frameToPage.types).map((t) => [t, (ctx, m) => seen.push([ctx, m.type])]));
  let started = false;
  const r = receiver("frameToPage", handlers, { frameBooting: () => !started, frameStarted: () => started });
  const dropped = [];
  r.receive("ctx", { type: "frame_ready" }, (p) => dropped.push(p));
  started = true;
  r.receive("ctx", { type: "frame_ready" }, (p) => dropped.push(p.condition));
  r.receive("ctx", { type: "ready", ms: 5 }, (p) => dropped.push(p));
  assert.deepEqual(seen, [
    ["ctx", "frame_ready"],
    ["ctx", "ready"],
  ]);
  assert.deepEqual(dropped, ["frameBooting"]);
});

test("fs requests: exactly the table's keys and kinds", () => {
  assert.ok(fsRequest({ op: "readFile", path: "a" }));
  assert.ok(fsRequest({ op: "writeFile", path: "a", append: false }));
  assert.ok(fsRequest({ op: "rename", from: "a", to: "b" }));
  assert.ok(fsRequest({ op: "exportZip" }));
  for (const bad of [
    null,
    [],
    "readFile",
    { op: "readFile" },
    { op: "readFile", path: 5 },
    { op: "readFile", path: "a", extra: 1 },
    { op: "writeFile", path: "a", append: "yes" },
    { op: "toString", path: "a" },
    { op: "nope", path: "a" },
    { path: "a" },
  ]) {
    assert.equal(fsRequest(bad), null, JSON.stringify(bad));
  }
});

test("every code is a named constant, and the sandbox's codes are codes", () => {
  const names = Object.values(DIAGNOSTICS).map((d) => d.name);
  assert.equal(new Set(names).size, names.length);
  for (const c of SANDBOX_CODES) assert.ok(names.includes(c), c);
  for (const channel of Object.values(PROTOCOL)) {
    const codes = [channel.malformed, channel.unknown];
    for (const entry of Object.values(channel.types)) codes.push(entry.malformed, ...[...entry.when, ...entry.accept].map(([, c]) => c));
    for (const c of codes) assert.ok(c === null || c === undefined || names.includes(c), c);
  }
});
