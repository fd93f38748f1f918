// The change journal's feed in the worker (embed/worker/journal.mjs) over a real Pyodide's
// MEMFS in Node: what it records below /work, folded per path and cause, and that past
// its bound it drops the batch and says so (every reader then resyncs), never growing.
import assert from "node:assert/strict";
import { test } from "node:test";
import { loadPyodide } from "pyodide";
import { journalFeed } from "../../embed/worker/journal.mjs";

const pyodide = await loadPyodide();
const FS = pyodide.FS;
for (const dir of ["/work", "/tmp"]) FS.mkdirTree(dir);

test("each change below /work once, folded per path and cause, with its cause", () => {
  const feed = journalFeed(FS);
  feed.setCause("call_1");
  FS.writeFile("/work/a", "1"); // made, given its mode, written: one record
  FS.writeFile("/work/a", "22"); // rewritten by the same call right after: still one record
  FS.writeFile("/tmp/outside", "x"); // not the workspace
  feed.setCause("page:rename:4");
  FS.writeFile("/work/b", "b");
  FS.rename("/work/b", "/work/a"); // over a file: it is deleted first
  FS.mkdir("/work/d");
  FS.rmdir("/work/d");
  const { records, lost } = feed.drain();
  assert.equal(lost, false);
  assert.deepEqual(records, [
    ["created", "/work/a", null, "call_1"],
    ["created", "/work/b", null, "page:rename:4"],
    ["deleted", "/work/a", null, "page:rename:4"],
    ["renamed", "/work/a", "/work/b", "page:rename:4"],
    ["dir_created", "/work/d", null, "page:rename:4"],
    ["dir_deleted", "/work/d", null, "page:rename:4"],
  ]);
  assert.deepEqual(feed.drain(), { records: [], lost: false });
  feed.stop();
});

test("past its bound between two drains the feed drops the batch and says so", () => {
  const feed = journalFeed(FS, 3);
  for (let i = 0; i < 5; i++) FS.writeFile(`/work/many${i}`, "x");
  assert.deepEqual(feed.drain(), { records: [], lost: true });
  FS.writeFile("/work/after", "x"); // the next batch is whole again
  assert.deepEqual(feed.drain(), { records: [["created", "/work/after", null, ""]], lost: false });
  feed.stop();
});
