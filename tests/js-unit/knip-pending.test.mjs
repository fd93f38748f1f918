// tooling/knip-pending.mjs, knip.jsonc's preprocessor: it takes out exactly the pending
// exports it names, and fails once one of them is no longer reported.
import assert from "node:assert/strict";
import { test } from "node:test";
import dropPending from "../../tooling/knip-pending.mjs";

const report = () => ({
  issues: {
    exports: {
      "embed/worker/a.mjs": { LIMIT: {}, OTHER: {} },
      "embed/page/b.mjs": { UNUSED: {} },
    },
  },
  counters: { exports: 3 },
});

test("the named exports are taken out of the report and its count; the others stay", () => {
  const data = { ...report(), preprocessorOptions: JSON.stringify({ pending: { "embed/worker/a.mjs": ["LIMIT"] } }) };
  const out = dropPending(data);
  assert.deepEqual(Object.keys(out.issues.exports["embed/worker/a.mjs"]), ["OTHER"]);
  assert.deepEqual(Object.keys(out.issues.exports["embed/page/b.mjs"]), ["UNUSED"]);
  assert.equal(out.counters.exports, 2);
});

test("a file whose every reported export is pending leaves the report", () => {
  const data = { ...report(), preprocessorOptions: JSON.stringify({ pending: { "embed/page/b.mjs": ["UNUSED"] } }) };
  const out = dropPending(data);
  assert.equal("embed/page/b.mjs" in out.issues.exports, false);
  assert.equal(out.counters.exports, 2);
});

test("a pending name that is not reported fails the run, naming it", () => {
  const data = { ...report(), preprocessorOptions: JSON.stringify({ pending: { "embed/worker/a.mjs": ["LIMIT", "GONE"] } }) };
  assert.throws(() => dropPending(data), /embed\/worker\/a\.mjs: GONE/);
});

test("without options nothing changes", () => {
  const out = dropPending({ ...report(), preprocessorOptions: "" });
  assert.equal(out.counters.exports, 3);
});
