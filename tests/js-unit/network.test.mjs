// The model's network (embed/page/network.mjs): what a request carries, and that it never
// rejects. The transport is a function the test passes (createNetwork's third argument),
// standing in for the platform fetch that the page uses in the browser (e2e covers that).
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  agentNetwork,
  CommandSlots,
  checkNetworkOption,
  checkPackagesOption,
  createNetwork,
  gitEndpoint,
  MAX_IN_FLIGHT,
} from "../../embed/page/network.mjs";

const OPTIONS = { allow: ["https://api.test/data/"] };
const ok = (body = "{}") => new Response(body, { status: 200 });

test("a request carries the model's headers, the page's per-origin ones, and no credentials", async () => {
  const seen = [];
  const net = createNetwork(OPTIONS, { "https://api.test": { "X-Api-Key": "k" } }, async (url, init) => {
    seen.push({ url, init });
    return ok();
  });
  const reply = await net.fetch({
    url: "https://api.test/data/x",
    method: "GET",
    headers: { "x-api-key": "model's", accept: "a" },
    body: null,
  });
  assert.equal(reply.status, 200);
  const { init } = seen[0];
  assert.equal(init.credentials, "omit");
  assert.equal(init.referrerPolicy, "no-referrer");
  assert.equal(init.redirect, "error");
  assert.deepEqual(init.headers, { "x-api-key": "k", accept: "a" });
});

test("refused requests never reach the transport", async () => {
  let calls = 0;
  const net = createNetwork(OPTIONS, {}, async () => {
    calls++;
    return ok();
  });
  for (const url of ["https://api.test/database", "https://other.test/data/x", "https://api.test/data/..%2fsecret"]) {
    const reply = await net.fetch({ url, method: "GET", headers: {}, body: null });
    assert.match(reply.error, /^network: /);
  }
  assert.equal((await net.fetch({ url: "https://api.test/data/x", method: "POST", headers: {}, body: "x" })).error.includes("POST"), true);
  assert.equal(calls, 0);
});

test("a body that breaks half-way and an abort are errors, never rejections", async () => {
  const broken = new ReadableStream({
    start(controller) {
      controller.enqueue(new Uint8Array(10));
      controller.error(new TypeError("network error"));
    },
  });
  const net = createNetwork(OPTIONS, {}, async () => new Response(broken));
  const reply = await net.fetch({ url: "https://api.test/data/x", method: "GET", headers: {}, body: null });
  assert.match(reply.error, /broke off/);

  const controller = new AbortController();
  const slow = createNetwork(
    OPTIONS,
    {},
    (_url, init) =>
      new Promise((_, reject) => {
        init.signal.addEventListener("abort", () => reject(init.signal.reason));
      }),
  );
  const pending = slow.fetch({ url: "https://api.test/data/x", method: "GET", headers: {}, body: null }, controller.signal);
  controller.abort();
  assert.match((await pending).error, /aborted \(its command ended\)/);
});

test("network.headers must name origins of network.allow", () => {
  assert.equal(checkNetworkOption({ ...OPTIONS, headers: { "https://api.test": { "x-k": "v" } } }), null);
  assert.match(checkNetworkOption({ ...OPTIONS, headers: { "https://evil.test": { "x-k": "v" } } }), /of network.allow/);
  assert.match(checkNetworkOption({ ...OPTIONS, headers: { "https://api.test/data": { "x-k": "v" } } }), /must be an origin/);
  assert.match(checkNetworkOption({ ...OPTIONS, headers: { "https://api.test": { "bad name": "v" } } }), /header names/);
});

test("a package index's origin may be read, nothing more; the option is checked", async () => {
  const seen = [];
  const options = agentNetwork(undefined, { indexUrls: ["https://pypi.test/simple"] });
  const net = createNetwork(options, {}, async (url, init) => {
    seen.push({ url, init });
    return ok();
  });
  assert.deepEqual(net.allow, ["https://pypi.test/simple"]);
  // Any path of the index's origin (its wheels are under /files/), read only.
  assert.equal((await net.fetch({ url: "https://pypi.test/files/x.whl", method: "GET", headers: {}, body: null })).status, 200);
  assert.equal(seen[0].init.credentials, "omit");
  assert.equal(seen[0].init.cache, "default"); // the next sandbox's reinstall may hit the cache
  assert.match((await net.fetch({ url: "https://pypi.test/simple/x/", method: "POST", headers: {}, body: "" })).error, /POST/);
  assert.match((await net.fetch({ url: "https://other.test/x", method: "GET", headers: {}, body: null })).error, /not in the allowed/);
  assert.equal(seen.length, 1);
  assert.equal(agentNetwork(undefined, undefined), null);
  assert.equal(checkPackagesOption({ indexUrls: ["https://pypi.test/simple"] }), null);
  for (const bad of [
    {},
    { indexUrls: "x" },
    { indexUrls: ["ftp://x/"] },
    { indexUrls: ["https://u:p@x/"] },
    { indexUrls: [], mirror: 1 },
  ]) {
    assert.match(checkPackagesOption(bad), /^packages/);
  }
  assert.match(checkPackagesOption({ indexUrls: Array(11).fill("https://x.test/") }), /at most 10/);
});

test("a command's requests take turns, and its end aborts them and refuses later ones", async () => {
  const slots = new CommandSlots();
  const first = await Promise.all(Array.from({ length: MAX_IN_FLIGHT }, () => slots.take("c1")));
  assert.ok(first.every((slot) => slot !== null));
  let waited = null;
  const next = slots.take("c1").then((slot) => (waited = slot));
  await Promise.resolve();
  assert.equal(waited, null, "the seventh waits its turn");
  first[0].release();
  await next;
  assert.ok(waited !== null && !waited.signal.aborted);
  const other = await slots.take("c2"); // another command has turns of its own
  assert.ok(other !== null);
  const queued = slots.take("c1");
  slots.end("c1", new Error("the command ended"));
  assert.equal(await queued, null, "a waiting request is refused when its command ends");
  assert.ok(first[1].signal.aborted && first[1].signal.reason.message === "the command ended");
  assert.equal(await slots.take("c1"), null, "and so is a later one");
  slots.endAll(new Error("closed"));
  assert.ok(other.signal.aborted && other.signal.reason.message === "closed");
});

test("git.auth: its credentials go only to a git remote's smart-HTTP requests, and never come back", async () => {
  const repo = "https://git.test/org/repo.git";
  assert.equal(gitEndpoint(`${repo}/info/refs?service=git-upload-pack`, "GET"), "git-upload-pack");
  assert.equal(gitEndpoint(`${repo}/git-receive-pack`, "POST"), "git-receive-pack");
  assert.equal(gitEndpoint(`${repo}/info/refs?service=other`, "GET"), null);
  assert.equal(gitEndpoint(`${repo}/git-upload-pack?x=1`, "POST"), null);
  assert.equal(gitEndpoint(`${repo}/README.md`, "GET"), null);
  const seen = [];
  const asked = [];
  let answer = "ok";
  const net = createNetwork(
    { allow: [repo] },
    {},
    async (url, init) => {
      seen.push({ url, headers: init.headers, method: init.method });
      return new Response(answer, { status: 200 });
    },
    {
      auth: async (url) => {
        asked.push(url);
        return { username: "agent", password: "s3cret-token" };
      },
    },
  );
  const basic = `Basic ${btoa("agent:s3cret-token")}`;
  const got = await net.fetch({ url: `${repo}/git-upload-pack`, method: "POST", headers: {}, body: new ArrayBuffer(4) });
  assert.equal(got.status, 200);
  assert.equal(seen[0].headers.authorization, basic);
  // Not a git endpoint: no credentials, and POST is refused (only GET and HEAD are allowed).
  await net.fetch({ url: `${repo}/README.md`, method: "GET", headers: {}, body: null });
  assert.equal(seen[1].headers.authorization, undefined);
  const post = await net.fetch({ url: `${repo}/upload`, method: "POST", headers: {}, body: "x" });
  assert.match(post.error, /the method POST is not allowed/);
  assert.deepEqual(asked, [`${repo}/git-upload-pack`]);
  // A server that echoes the credentials back: its answer is refused.
  answer = `you sent ${basic}`;
  const echoed = await net.fetch({ url: `${repo}/info/refs?service=git-upload-pack`, method: "GET", headers: {}, body: null });
  assert.match(echoed.error, /holds the credentials the page's git.auth gave/);
  answer = "the password is s3cret-token";
  const raw = await net.fetch({ url: `${repo}/info/refs?service=git-upload-pack`, method: "GET", headers: {}, body: null });
  assert.ok(raw.error);
});

test("git.corsProxy: a remote's requests go through it, checked on the remote's own URL", async () => {
  const seen = [];
  const net = createNetwork(
    { allow: ["https://git.test/org/repo.git"] },
    {},
    async (url) => {
      seen.push(url);
      return new Response("ok", { status: 200 });
    },
    { corsProxy: "https://proxy.test/git/" },
  );
  await net.fetch({ url: "https://git.test/org/repo.git/info/refs?service=git-upload-pack", method: "GET", headers: {}, body: null });
  await net.fetch({ url: "https://git.test/org/repo.git/README.md", method: "GET", headers: {}, body: null });
  const other = await net.fetch({
    url: "https://other.test/x.git/info/refs?service=git-upload-pack",
    method: "GET",
    headers: {},
    body: null,
  });
  assert.deepEqual(seen, [
    "https://proxy.test/git/git.test/org/repo.git/info/refs?service=git-upload-pack",
    "https://git.test/org/repo.git/README.md",
  ]);
  assert.match(other.error, /not in the allowed network/);
});
