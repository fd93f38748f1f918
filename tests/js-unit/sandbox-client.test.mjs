// The harness worker's end of the sandbox (embed/worker/sandbox-client.mjs), in Node: a real
// MessageChannel stands in for the page's, the test plays the sandbox on the other port.
import assert from "node:assert/strict";
import { test } from "node:test";
import { createSandboxClient, KILL, MAX_NET_PER_COMMAND } from "../../embed/worker/sandbox-client.mjs";

const LIMITS = { timeoutMs: 2000, maxCommands: 100, maxOutputBytes: 1 << 20, network: null };
const META = { full: true, dirs: [], removed: [], files: [], sizes: [] };
const NO_FILES = { toJs: () => new Uint8Array(0) };
const CHANGES = { dirs: [], files: [], removed: [], skipped: [] };
const tick = (ms = 10) => new Promise((resolve) => setTimeout(resolve, ms));

/** A client with a ready sandbox; `sandbox` is the sandbox's port, `host` what the
 * client asked of the page. */
async function setup() {
  const host = { restarts: [], started: [], ended: [], dropped: [], nets: [] };
  const client = createSandboxClient({
    restart: (reason, generation) => host.restarts.push({ reason, generation }),
    netFetch: async (request, command) => {
      host.nets.push({ request, command });
      return { status: 200, statusText: "OK", headers: {}, body: new ArrayBuffer(2), url: request.url };
    },
    commandStarted: (c) => host.started.push(c),
    commandEnded: (c) => host.ended.push(c),
    dropped: (code) => host.dropped.push(code),
  });
  const channel = new MessageChannel();
  const received = [];
  channel.port2.onmessage = (event) => received.push(event.data);
  assert.equal(client.attach(channel.port1, 1), true);
  channel.port2.postMessage({ type: "ready" });
  assert.equal(await client.ready(), 1);
  const close = () => {
    channel.port1.close();
    channel.port2.close();
  };
  return { client, host, sandbox: channel.port2, received, close };
}

async function start(s) {
  const reply = s.client.run("echo hi", LIMITS, META, NO_FILES, 1);
  await tick();
  const run = s.received.find((m) => m.type === "run");
  return { reply, run };
}

test("a result with the command's nonce is taken, once", async () => {
  const s = await setup();
  const { reply, run } = await start(s);
  assert.match(run.nonce, /^[0-9a-f]{32}$/);
  assert.deepEqual(
    s.host.started.map((c) => c.nonce),
    [run.nonce],
  );
  s.sandbox.postMessage({ type: "result", nonce: run.nonce, stdout: "hi\n", stderr: "", exitCode: 0, changes: CHANGES });
  const result = await reply;
  assert.equal(result.stdout, "hi\n");
  assert.deepEqual(
    s.host.ended.map((c) => c.nonce),
    [run.nonce],
  );
  s.close();
});

test("the sync goes out as one object and one buffer, the changes come back as arrays", async () => {
  const s = await setup();
  const meta = { full: false, dirs: ["/work/d"], removed: ["/work/old"], files: ["/work/a", "/work/d/b"], sizes: [2, 3] };
  const reply = s.client.run("true", LIMITS, meta, new Uint8Array([1, 2, 3, 4, 5]), 1);
  await tick();
  const run = s.received.find((m) => m.type === "run");
  assert.deepEqual(run.limits, LIMITS);
  assert.deepEqual(run.sync.files, [
    { path: "/work/a", at: 0, size: 2 },
    { path: "/work/d/b", at: 2, size: 3 },
  ]);
  assert.deepEqual([...new Uint8Array(run.sync.pack)], [1, 2, 3, 4, 5]);
  assert.deepEqual([run.sync.full, run.sync.dirs, run.sync.removed], [false, ["/work/d"], ["/work/old"]]);
  const data = new Uint8Array([7, 8]);
  const changes = { dirs: ["/work/n"], removed: [], skipped: ["/work/l"], files: [{ path: "/work/n/f", data }] };
  s.sandbox.postMessage({ type: "result", nonce: run.nonce, stdout: "", stderr: "", exitCode: 0, changes });
  const result = await reply;
  assert.deepEqual(result.changes, { dirs: ["/work/n"], removed: [], skipped: ["/work/l"], paths: ["/work/n/f"], datas: [data] });
  s.close();
});

test("each command gets a new nonce", async () => {
  const s = await setup();
  const nonces = [];
  for (let i = 0; i < 3; i++) {
    const { reply, run } = await start(s);
    nonces.push(run.nonce);
    s.received.length = 0;
    s.sandbox.postMessage({ type: "result", nonce: run.nonce, stdout: "", stderr: "", exitCode: 0, changes: CHANGES });
    await reply;
  }
  assert.equal(new Set(nonces).size, 3);
  s.close();
});

test("a result for another nonce ends the command and tears the sandbox down", async () => {
  const s = await setup();
  const { reply } = await start(s);
  s.sandbox.postMessage({ type: "result", nonce: "0".repeat(32), stdout: "FORGED", stderr: "", exitCode: 0, changes: CHANGES });
  assert.deepEqual(await reply, { killed: "forged", why: KILL.FORGED.why });
  assert.deepEqual(s.host.restarts, [{ reason: "forged", generation: 1 }]);
  assert.deepEqual(s.host.dropped, ["sandbox_forged"]);
  s.close();
});

test("any message while no command runs tears the sandbox down; later ones are never read", async () => {
  const s = await setup();
  for (let i = 0; i < 1000; i++) s.sandbox.postMessage({ type: "result", nonce: "x", changes: CHANGES });
  await tick(50);
  assert.deepEqual(s.host.restarts, [{ reason: "spoke", generation: 1 }]);
  assert.deepEqual(s.host.dropped, ["sandbox_spoke"]); // one, not a thousand
  s.close();
});

test("more messages than one command may send is a flood", async () => {
  const s = await setup();
  const { reply } = await start(s);
  for (let i = 0; i < MAX_NET_PER_COMMAND + 50; i++) {
    s.sandbox.postMessage({ type: "net", id: i, url: "https://x.test/", method: "GET", headers: {} });
  }
  assert.deepEqual(await reply, { killed: "flood", why: KILL.FLOOD.why });
  assert.ok(s.host.nets.length <= MAX_NET_PER_COMMAND);
  assert.ok(s.host.nets.every((n) => n.command === s.host.started[0].nonce));
  s.close();
});

test("a network request is answered only while its command runs", async () => {
  const s = await setup();
  const { reply, run } = await start(s);
  s.sandbox.postMessage({ type: "net", id: 7, url: "https://x.test/a", method: "GET", headers: {} });
  await tick(30);
  assert.equal(s.received.filter((m) => m.type === "net_result" && m.id === 7).length, 1);
  s.sandbox.postMessage({ type: "result", nonce: run.nonce, stdout: "", stderr: "", exitCode: 0, changes: CHANGES });
  await reply;
  s.close();
});

test("a package file is fetched by name from the bundle, only while its command runs", async () => {
  const asked = [];
  const saved = [];
  const channel = new MessageChannel();
  const received = [];
  channel.port2.onmessage = (event) => received.push(event.data);
  const client = createSandboxClient({
    restart: () => {},
    netFetch: async () => ({ error: "no" }),
    packageFile: async (file) => {
      asked.push(file);
      return { body: new ArrayBuffer(3) };
    },
    packages: { available: [["tabulate", "0.10.0"]], installed: ["tabulate==0.10.0", "bad name==1"], save: (l) => saved.push(l) },
  });
  client.attach(channel.port1, 1);
  channel.port2.postMessage({ type: "ready" });
  await client.ready();
  const reply = client.run("pip install tabulate", LIMITS, META, NO_FILES, 1);
  await tick();
  const run = received.find((m) => m.type === "run");
  // What the bundle ships, and what to install again (checked: the bad name is gone).
  assert.deepEqual(run.packages, { available: [["tabulate", "0.10.0"]], installed: ["tabulate==0.10.0"] });
  channel.port2.postMessage({ type: "pkg", id: 1, file: "tabulate-0.10.0-py3-none-any.whl" });
  channel.port2.postMessage({ type: "pkg", id: 2, file: "../manifest.json" });
  await tick(30);
  const answers = received.filter((m) => m.type === "net_result");
  assert.equal(answers.find((m) => m.id === 1).body.byteLength, 3);
  assert.match(answers.find((m) => m.id === 2).error, /not a package file/);
  assert.deepEqual(asked, ["tabulate-0.10.0-py3-none-any.whl"]);
  // What the sandbox says is installed is kept (bounded, checked) for the next one.
  const installed = ["rich==14.0.0", "tabulate==0.10.0", "x; rm -rf /==1"];
  channel.port2.postMessage({ type: "result", nonce: run.nonce, stdout: "", stderr: "", exitCode: 0, changes: CHANGES, installed });
  await reply;
  assert.deepEqual(saved, [["rich==14.0.0", "tabulate==0.10.0"]]);
  channel.port1.close();
  channel.port2.close();
});

test("a command after a cancelled one waits for it to stop instead of failing", async () => {
  const s = await setup();
  const { reply, run } = await start(s);
  s.client.cancel();
  const next = s.client.run("echo next", LIMITS, META, NO_FILES, 1);
  await tick(20);
  assert.equal(s.received.filter((m) => m.type === "run").length, 1); // still waiting
  s.sandbox.postMessage({ type: "result", nonce: run.nonce, stdout: "", stderr: "", exitCode: 130, changes: CHANGES });
  await reply;
  await tick(20);
  const second = s.received.filter((m) => m.type === "run")[1];
  assert.equal(second.command, "echo next");
  s.sandbox.postMessage({ type: "result", nonce: second.nonce, stdout: "next\n", stderr: "", exitCode: 0, changes: CHANGES });
  assert.equal((await next).stdout, "next\n");
  s.close();
});

test("a port from the page's deadline ends the command as timed out", async () => {
  const s = await setup();
  const { reply } = await start(s);
  const fresh = new MessageChannel();
  assert.equal(s.client.attach(fresh.port1, 2, "deadline"), true);
  assert.deepEqual(await reply, { killed: "timeout", why: KILL.TIMEOUT.why });
  assert.equal(s.client.attach(fresh.port1, 2), false); // never an older or the same generation
  fresh.port1.close();
  s.close();
});

test("a sync computed for another sandbox is stale", async () => {
  const s = await setup();
  const meta = { full: false, dirs: [], removed: [], files: [], sizes: [] };
  assert.deepEqual(await s.client.run("true", LIMITS, meta, NO_FILES, 0), { stale: true });
  s.close();
});

test("a sandbox that ran a command is recycled when the run ends; an unused one is kept", async () => {
  const s = await setup();
  assert.equal(s.client.recycle(), false);
  const { reply, run } = await start(s);
  s.sandbox.postMessage({ type: "result", nonce: run.nonce, stdout: "", stderr: "", exitCode: 0, changes: CHANGES });
  await reply;
  assert.equal(s.client.recycle(), true);
  // Told twice (Runtime.run_ended and the run_end event): replaced once.
  assert.equal(s.client.recycle(), false);
  assert.deepEqual(s.host.restarts, [{ reason: "recycled", generation: 1 }]);
  s.close();
});

test("a malformed result is an error, not a crash", async () => {
  const s = await setup();
  const { reply, run } = await start(s);
  s.sandbox.postMessage({ type: "result", nonce: run.nonce, changes: { files: "nope" } });
  assert.deepEqual(await reply, { error: "the sandbox sent a malformed result" });
  s.close();
});

test("a gate question goes to the line's gate, stops the clocks, and is answered", async () => {
  const s = await setup();
  const asked = [];
  const reply = s.client.run("x", { ...LIMITS, gate: true }, META, NO_FILES, 1, false, async (command) => {
    asked.push(command);
    await tick(30);
    return command.startsWith("rm") ? "denied" : undefined;
  });
  await tick();
  const run = s.received.find((m) => m.type === "run");
  s.sandbox.postMessage({ type: "gate", id: 1, command: "rm -rf /work", argv: ["rm", "-rf", "/work"] });
  s.sandbox.postMessage({ type: "gate", id: 2, command: "ls", argv: ["ls"] });
  s.sandbox.postMessage({ type: "gate", id: 3, command: "ls", argv: ["l", "s"] }); // words that do not join to it
  await tick(80);
  const answers = s.received.filter((m) => m.type === "gate_result");
  assert.deepEqual(answers, [
    { type: "gate_result", id: 3, refusal: "the command is not text the rules can check" },
    { type: "gate_result", id: 1, refusal: "denied" },
    { type: "gate_result", id: 2 },
  ]);
  assert.deepEqual(asked, ["rm -rf /work", "ls"]);
  // the page's deadline was armed long while the page was asked, then with what was left
  const ms = s.host.started.map((c) => c.ms);
  assert.ok(ms.length >= 3 && ms[1] > 3_600_000 && ms.at(-1) <= 2250, JSON.stringify(ms));
  s.sandbox.postMessage({ type: "result", nonce: run.nonce, stdout: "", stderr: "", exitCode: 0, changes: CHANGES });
  assert.equal((await reply).exitCode, 0);
  s.close();
});

test("more gate questions than the line's commands is a flood", async () => {
  const s = await setup();
  const limits = { ...LIMITS, maxCommands: 3, gate: true };
  const reply = s.client.run("x", limits, META, NO_FILES, 1, false, async () => undefined);
  await tick();
  for (let i = 1; i <= 14; i++) s.sandbox.postMessage({ type: "gate", id: i, command: "ls", argv: ["ls"] });
  const result = await reply;
  assert.equal(result.killed, KILL.FLOOD.name);
  assert.deepEqual(s.host.dropped, ["sandbox_flood"]);
  s.close();
});
