// The persistent store's change log (embed/worker/persist.mjs ChangeLog) over a real
// Pyodide's MEMFS in Node: what the store will write to OPFS, in order, after each kind
// of change. (The OPFS writes themselves need a browser: e2e/test_persistence.py.)
import assert from "node:assert/strict";
import { test } from "node:test";
import { loadPyodide } from "pyodide";
import { ChangeLog, changeRecords } from "../../embed/worker/persist.mjs";

const pyodide = await loadPyodide();
const FS = pyodide.FS;
for (const dir of ["/work", "/state", "/tmp"]) FS.mkdirTree(dir);
const log = new ChangeLog(FS);

/** The entries `fn` adds, taken off the log (as the store's flush does). */
function logged(fn) {
  log.entries.splice(0);
  fn();
  return log.entries.splice(0);
}

test("a new file is one write from byte 0; an append writes from where it began", () => {
  assert.deepEqual(
    logged(() => FS.writeFile("/work/a.txt", "hello")),
    [{ op: "write", path: "/work/a.txt", from: 0 }],
  );
  assert.deepEqual(
    logged(() => pyodide.runPython("with open('/work/a.txt', 'a') as f:\n    f.write(', world'); f.flush(); f.write('!')")),
    [{ op: "write", path: "/work/a.txt", from: 5 }],
  );
  assert.deepEqual(
    logged(() => FS.truncate("/work/a.txt", 3)),
    [{ op: "write", path: "/work/a.txt", from: 3 }],
  );
});

test("consecutive writes of one file coalesce; another file in between does not", () => {
  assert.deepEqual(
    logged(() => {
      FS.writeFile("/work/b", "1");
      FS.writeFile("/work/b", "22");
      FS.writeFile("/work/c", "3");
      FS.writeFile("/work/b", "4");
    }),
    [
      { op: "write", path: "/work/b", from: 0 },
      { op: "write", path: "/work/c", from: 0 },
      { op: "write", path: "/work/b", from: 0 },
    ],
  );
});

test("folders, removals and renames within a root keep their kind", () => {
  assert.deepEqual(
    logged(() => {
      FS.mkdir("/work/d");
      FS.writeFile("/work/d/f", "f");
      FS.rename("/work/d", "/work/e");
      FS.unlink("/work/e/f");
      FS.rmdir("/work/e");
    }),
    [
      { op: "mkdir", path: "/work/d", to: undefined },
      { op: "write", path: "/work/d/f", from: 0 },
      { op: "rename", path: "/work/d", to: "/work/e" },
      { op: "remove", path: "/work/e/f", to: undefined },
      { op: "remove", path: "/work/e", to: undefined },
    ],
  );
});

test("a rename between /work and /state is a remove and a write; one from outside is a write", () => {
  FS.writeFile("/work/t", "t");
  FS.writeFile("/tmp/o", "o");
  assert.deepEqual(
    logged(() => {
      FS.rename("/work/t", "/state/t");
      FS.rename("/tmp/o", "/work/o");
      FS.rename("/work/o", "/tmp/o2");
    }),
    [
      { op: "remove", path: "/work/t", to: undefined },
      { op: "write", path: "/state/t", from: 0 },
      { op: "write", path: "/work/o", from: 0 },
      { op: "remove", path: "/work/o", to: undefined },
    ],
  );
});

test("what is not stored is not logged: /tmp, the roots themselves", () => {
  FS.writeFile("/work/m", "m");
  assert.deepEqual(
    logged(() => {
      FS.writeFile("/tmp/x", "x");
      FS.mkdir("/tmp/y");
      FS.chmod("/tmp/x", 0o600);
      FS.chmod("/work", 0o700);
    }),
    [],
  );
});

test("a mode given is logged and stored with the mode it has at the flush", () => {
  FS.writeFile("/work/m", "m");
  FS.mkdir("/work/md");
  const entries = logged(() => {
    FS.chmod("/work/m", 0o600);
    FS.chmod("/work/md", 0o700);
    FS.writeFile("/work/m2", "x");
    FS.chmod("/work/m2", 0o640); // right after its write: the write's record carries it
  });
  assert.deepEqual(entries, [
    { op: "chmod", path: "/work/m", to: undefined },
    { op: "chmod", path: "/work/md", to: undefined },
    { op: "write", path: "/work/m2", from: 0 },
  ]);
  const headers = entries.flatMap((e) => changeRecords(FS, e)).map((r) => r.header);
  assert.deepEqual(
    headers.map((h) => [h.op, h.path, h.mode]),
    [
      ["chmod", "/work/m", 0o600],
      ["chmod", "/work/md", 0o700],
      ["write", "/work/m2", 0o640],
    ],
  );
});

test("changes counts every change logged, coalesced or not", () => {
  const before = log.changes;
  FS.writeFile("/work/n", "1");
  FS.writeFile("/work/n", "2");
  FS.writeFile("/tmp/n", "3");
  // a new file: its create, its mode and its write; rewritten: its truncate and its write
  assert.equal(log.changes - before, 3 + 2);
});
