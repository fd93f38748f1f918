// Starting the harness worker (embed/page/worker-start.mjs) in Node: the classifiers that
// turn what the browser shows into the cause and the fix, and startWorker with a fake
// Worker, document, fetch and Trusted Types factory standing in for the page's (e2e/
// test_strict_pages.py runs the real ones in Chromium). The messages asserted on are the
// browser's own (Chromium's wording).
import assert from "node:assert/strict";
import { resolveObjectURL } from "node:buffer";
import { test } from "node:test";
import "./load-embed.mjs"; // trusted-types.mjs imports the build's sandbox-frame.mjs

// A page that enforces Trusted Types and lists "pyharness": the policy is made, once, on
// the first start; what it makes is wrapped so that a test can tell.
const made = [];
globalThis.trustedTypes = {
  createPolicy(name, rules) {
    made.push(name);
    return {
      createScriptURL: (url) => ({ trustedScriptURL: rules.createScriptURL(url) }),
      createHTML: (html) => ({ trustedHTML: rules.createHTML(html) }),
    };
  },
};
globalThis.location = { origin: "https://app.test" };

class FakeWorker extends EventTarget {
  static made = [];
  /** @type {Error | null} what the next constructor call throws */
  static refuse = null;
  constructor(url, options) {
    super();
    FakeWorker.made.push({ url, options });
    const refuse = FakeWorker.refuse;
    FakeWorker.refuse = null;
    if (refuse) throw refuse;
  }
}
globalThis.Worker = FakeWorker;

const { loadFailure, startFailure, startWorker } = await import("../../embed/page/worker-start.mjs");
const { sandboxSrcdoc } = await import("../../embed/page/trusted-types.mjs");

/** The facts of a start, as startWorker gathers them, with `over` changed. */
const facts = (over = {}) => ({
  workerUrl: "https://app.test/pyharness/worker.mjs",
  pageOrigin: "https://app.test",
  shim: false,
  isolated: false,
  shell: false,
  policyRefused: null,
  violations: [],
  ...over,
});
const CDN = { workerUrl: "https://cdn.test/pyharness/worker.mjs", shim: true };
const domError = (name, message) => Object.assign(new Error(message), { name });
const JS = { status: 200, contentType: "text/javascript", coep: null };

test("Trusted Types refusing the worker's URL names the policies to list, the sandbox's with the shell", () => {
  const refused = new TypeError("Failed to construct 'Worker': This document requires 'TrustedScriptURL' assignment.");
  const why = "Failed to execute 'createPolicy' on 'TrustedTypePolicyFactory': Policy \"pyharness\" disallowed.";
  const alone = startFailure(refused, facts({ policyRefused: why }));
  assert.match(alone, /add "pyharness" to the page's trusted-types directive/);
  assert.match(alone, /Policy "pyharness" disallowed/);
  assert.doesNotMatch(alone, /pyharness-sandbox/);
  const shell = startFailure(refused, facts({ policyRefused: why, shell: true }));
  assert.match(shell, /add "pyharness pyharness-sandbox" to the page's trusted-types directive/);
  assert.match(shell, /trusted-types pyharness pyharness-sandbox\)/);
  // a policy that was made, but a sink that still refused (a page's default policy, say)
  assert.match(startFailure(refused, facts()), /refused the worker's URL .*TrustedScriptURL/);
});

test("a worker of another origin, a page's CSP and an opaque origin each get their own fix", () => {
  const crossOrigin = domError(
    "SecurityError",
    "Failed to construct 'Worker': Script at 'https://cdn.test/pyharness/worker.mjs' cannot be accessed from origin 'https://app.test'.",
  );
  assert.match(
    startFailure(crossOrigin, facts({ workerUrl: CDN.workerUrl })),
    /another origin \(https:\/\/cdn\.test\).*Access-Control-Allow-Origin/,
  );
  const csp = domError("SecurityError", "Access to the script at 'x' is denied by the document's Content Security Policy.");
  assert.match(startFailure(csp, facts()), /allow 'self' in worker-src/);
  assert.match(startFailure(csp, facts(CDN)), /allow blob: and https:\/\/cdn\.test in worker-src/);
  assert.match(startFailure(crossOrigin, facts({ ...CDN, pageOrigin: "null" })), /opaque origin.*allow-same-origin/);
  // nothing recognised: the browser's own words, never a guess
  assert.match(startFailure(new RangeError("odd"), facts()), /refused to start .*worker\.mjs as a worker \(RangeError: odd\)/);
  // a refused policy does not make a SecurityError a Trusted Types problem
  assert.match(startFailure(csp, facts({ policyRefused: "disallowed" })), /worker-src/);
});

test("a script that did not load: the page's CSP violation first, then what a fetch of it shows", () => {
  const blob = facts({ ...CDN, violations: [{ directive: "worker-src", blockedURI: "blob" }] });
  assert.match(
    loadFailure(blob, JS),
    /worker-src does not allow blob\): allow blob: and https:\/\/cdn\.test in worker-src \(pyharness starts a bundle of another origin from a blob: module/,
  );
  const self = facts({ violations: [{ directive: "script-src", blockedURI: "https://app.test/pyharness/worker.mjs" }] });
  assert.match(loadFailure(self, JS), /allow 'self' in worker-src/);
  assert.match(
    loadFailure(facts(CDN), { error: "Failed to fetch" }),
    /another origin \(https:\/\/cdn\.test\).*Access-Control-Allow-Origin/,
  );
  assert.match(loadFailure(facts(), { error: "Failed to fetch" }), /could not fetch .*check the baseUrl option/);
  assert.match(loadFailure(facts(), { ...JS, status: 404 }), /answered 404: check the baseUrl option/);
  assert.match(
    loadFailure(facts(), { ...JS, contentType: "text/html" }),
    /served as "text\/html": a module worker must be served as text\/javascript/,
  );
  // an <iframe sandbox>: whether the bundle has CORS or not, the worker does not start there
  for (const probe of [{ error: "Failed to fetch" }, JS]) {
    assert.match(loadFailure(facts({ ...CDN, pageOrigin: "null" }), probe), /opaque origin.*add allow-same-origin/);
  }
  const probeRefused = facts({ ...CDN, violations: [{ directive: "connect-src", blockedURI: "https://cdn.test" }] });
  assert.match(loadFailure(probeRefused, { error: "Failed to fetch" }), /connect-src\) kept pyharness from fetching it/);
  // served, with CORS, but the import still failed: the page's worker-src (a blob: worker follows it)
  assert.match(loadFailure(facts(CDN), JS), /worker-src \(or script-src, without one\) must allow https:\/\/cdn\.test as well as blob:/);
});

test("an isolated page whose worker.mjs has no COEP header is told to add it", () => {
  const message = loadFailure(facts({ isolated: true }), JS);
  assert.match(message, /cross-origin isolated .*without a Cross-Origin-Embedder-Policy header/);
  assert.match(message, /Cross-Origin-Embedder-Policy: require-corp .*pyharness serve --isolate/);
  // with the header there, COEP is not blamed; nor on a page that is not isolated
  assert.doesNotMatch(loadFailure(facts({ isolated: true }), { ...JS, coep: "require-corp" }), /came without/);
  assert.match(loadFailure(facts(), JS), /gave no reason .*if the page sends Cross-Origin-Embedder-Policy/);
});

test("a bundle of another origin starts from a blob: module that imports it, revoked once the worker speaks", async () => {
  const { worker, stop } = startWorker(new URL("https://cdn.test/pyharness/worker.mjs"), { shell: false });
  const { url, options } = FakeWorker.made.at(-1);
  assert.deepEqual(options, { type: "module", name: "pyharness" });
  const blobUrl = url.trustedScriptURL; // through the pyharness policy
  assert.match(blobUrl, /^blob:/);
  assert.equal(await resolveObjectURL(blobUrl).text(), 'import "https://cdn.test/pyharness/worker.mjs";\n');
  worker.dispatchEvent(new Event("message"));
  assert.equal(resolveObjectURL(blobUrl), undefined);
  stop(); // again, as close() does: nothing left to undo
  // the policy takes nothing but pyharness's own worker URLs
  assert.deepEqual(made, ["pyharness"]);
  const same = startWorker(new URL("https://app.test/pyharness/worker.mjs"), { shell: false });
  assert.deepEqual(FakeWorker.made.at(-1).url, { trustedScriptURL: "https://app.test/pyharness/worker.mjs" });
  same.stop();
  assert.throws(
    () => startWorker(new URL("https://app.test/evil.js"), { shell: false }),
    (err) => err.code === "EBOOT" && /the pyharness policy makes only pyharness's worker URL/.test(err.message),
  );
  assert.deepEqual(made, ["pyharness"]); // made once
  // and, for HTML, the sandbox frame's document alone
  assert.ok(
    sandboxSrcdoc().trustedHTML.startsWith(`<!doctype html><meta http-equiv="Content-Security-Policy" content="default-src 'none';`),
  );
});

test("a refused constructor is an EBOOT at step worker; a failed load is found out by a fetch", async () => {
  FakeWorker.refuse = domError("SecurityError", "Access to the script at 'x' is denied by the document's Content Security Policy.");
  assert.throws(
    () => startWorker(new URL("https://app.test/pyharness/worker.mjs"), { shell: true }),
    (err) => err.name === "HarnessError" && err.code === "EBOOT" && err.step === "worker" && /allow 'self' in worker-src/.test(err.message),
  );
  const fetched = [];
  globalThis.fetch = async (url, init) => {
    fetched.push({ url, init });
    return new Response("not here", { status: 404 });
  };
  const { failure } = startWorker(new URL("https://app.test/pyharness/worker.mjs"), { shell: false });
  const error = await failure(new Event("error"));
  assert.equal(error.code, "EBOOT");
  assert.equal(
    error.message,
    "pyharness failed to start at step 'worker': GET https://app.test/pyharness/worker.mjs answered 404: check the baseUrl option and that the whole directory `pyharness build` writes is served there",
  );
  assert.deepEqual(fetched, [{ url: "https://app.test/pyharness/worker.mjs", init: { cache: "no-store", credentials: "same-origin" } }]);
  // a worker that loaded and threw says so, without a fetch
  const threw = startWorker(new URL("https://app.test/pyharness/worker.mjs"), { shell: false });
  const thrown = await threw.failure(Object.assign(new Event("error"), { message: "Uncaught SyntaxError: x" }));
  assert.match(thrown.message, /worker\.mjs stopped with an error: Uncaught SyntaxError: x$/);
  assert.equal(fetched.length, 1);
});

test("the page's CSP violations while the worker starts are what a failed load is told by", async () => {
  globalThis.document = new EventTarget();
  globalThis.fetch = async () => new Response("", { status: 200, headers: { "content-type": "text/javascript" } });
  try {
    const { failure } = startWorker(new URL("https://cdn.test/pyharness/worker.mjs"), { shell: false });
    const violation = Object.assign(new Event("securitypolicyviolation"), { effectiveDirective: "worker-src", blockedURI: "blob" });
    document.dispatchEvent(violation);
    const error = await failure(new Event("error"));
    assert.match(error.message, /allow blob: and https:\/\/cdn\.test in worker-src/);
    // once it failed the page is no longer watched
    const later = startWorker(new URL("https://cdn.test/pyharness/worker.mjs"), { shell: false });
    later.stop();
    document.dispatchEvent(violation);
    assert.match((await later.failure(new Event("error"))).message, /must allow https:\/\/cdn\.test as well as blob:/);
  } finally {
    delete globalThis.document;
  }
});
