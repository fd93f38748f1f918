// The pyharness Trusted Types policy (embed/page/trusted-types.mjs) on a page that refuses
// it: its `trusted-types` directive does not list "pyharness" (a fake factory that throws as
// Chromium's does). pyharness then hands the sinks plain strings, and says why it has no
// policy (worker-start.test.mjs has a page that lists it; e2e/test_strict_pages.py both).
import assert from "node:assert/strict";
import { resolveObjectURL } from "node:buffer";
import { test } from "node:test";
import "./load-embed.mjs"; // trusted-types.mjs imports the build's sandbox-frame.mjs

const asked = [];
globalThis.trustedTypes = {
  createPolicy(name) {
    asked.push(name);
    throw new TypeError(`Failed to execute 'createPolicy' on 'TrustedTypePolicyFactory': Policy "${name}" disallowed.`);
  },
};

const { policyRefusal, sandboxSrcdoc, workerScriptUrl, workerShim } = await import("../../embed/page/trusted-types.mjs");

test("a refused policy leaves plain strings, and the reason, asked for once", () => {
  assert.equal(workerScriptUrl("https://app.test/pyharness/worker.mjs"), "https://app.test/pyharness/worker.mjs");
  assert.equal(typeof sandboxSrcdoc(), "string");
  assert.equal(policyRefusal(), `Failed to execute 'createPolicy' on 'TrustedTypePolicyFactory': Policy "pyharness" disallowed.`);
  assert.deepEqual(asked, ["pyharness"]);
});

test("a shim imports the absolute worker URL and nothing else, until revoked", async () => {
  const shim = workerShim('https://cdn.test/a "quoted"/worker.mjs');
  assert.equal(await resolveObjectURL(shim.url).text(), 'import "https://cdn.test/a \\"quoted\\"/worker.mjs";\n');
  assert.equal(resolveObjectURL(shim.url).type, "text/javascript");
  shim.revoke();
  assert.equal(resolveObjectURL(shim.url), undefined);
});
