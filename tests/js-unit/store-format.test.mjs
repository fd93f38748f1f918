// The stored workspace's format (embed/worker/store-format.mjs) and the records the store
// writes for each logged change (persist.mjs changeRecords), over real Pyodide MEMFS in
// Node: a torn tail is dropped and never half-applied, and replaying a snapshot plus the
// log gives the tree the worker had. (The OPFS reads and writes: e2e/test_persistence.py.)
import assert from "node:assert/strict";
import { test } from "node:test";
import { loadPyodide } from "pyodide";
import { ChangeLog, changeRecords } from "../../embed/worker/persist.mjs";
import { applyRecords, decodeRecords, encodeRecords, treeRecords, VERSION, wellFormed } from "../../embed/worker/store-format.mjs";

const [a, b] = await Promise.all([loadPyodide(), loadPyodide()]);
for (const py of [a, b]) for (const dir of ["/work", "/state"]) py.FS.mkdirTree(dir);

const bytes = (text) => new TextEncoder().encode(text);
const begin = (kind) => ({ header: { op: "begin", kind, version: VERSION } });

/** Every file and folder below root: path → [its mode, bytes as text or "dir"]. */
function tree(FS, root = "/work") {
  const out = {};
  const walk = (dir) => {
    for (const name of FS.readdir(dir).sort()) {
      if (name === "." || name === "..") continue;
      const path = `${dir}/${name}`;
      const mode = FS.lstat(path).mode;
      if (FS.isDir(mode)) {
        out[path] = [mode & 0o7777, "dir"];
        walk(path);
      } else out[path] = [mode & 0o7777, new TextDecoder().decode(FS.readFile(path))];
    }
  };
  walk(root);
  return out;
}

test("records round-trip, and each file kind is told apart", () => {
  const records = [
    begin("log"),
    { header: { op: "write", path: "/work/a", at: 0 }, data: bytes("hi") },
    { header: { op: "remove", path: "/work/b" } },
  ];
  const { records: back, end } = decodeRecords(encodeRecords(records));
  assert.equal(end, encodeRecords(records).length);
  assert.deepEqual(
    back.map((r) => [r.header, new TextDecoder().decode(r.data)]),
    records.map((r) => [r.header, r.data ? "hi" : ""]),
  );
  assert.ok(wellFormed(back, "log") && !wellFormed(back, "snapshot"));
  assert.ok(!wellFormed([begin("snapshot")], "snapshot"), "a snapshot without its end was cut short");
  assert.ok(wellFormed([begin("snapshot"), { header: { op: "end" } }], "snapshot"));
});

test("a tail cut anywhere is dropped whole; a changed byte ends the good part there", () => {
  const records = [
    begin("log"),
    ...Array.from({ length: 4 }, (_, i) => ({ header: { op: "write", path: `/work/f${i}` }, data: bytes("x".repeat(i * 7)) })),
  ];
  const whole = encodeRecords(records);
  const ends = [0];
  for (let i = 1; i <= records.length; i++) ends.push(encodeRecords(records.slice(0, i)).length);
  for (let cut = 0; cut <= whole.length; cut++) {
    const { records: got, end } = decodeRecords(whole.subarray(0, cut));
    const wholeRecords = ends.filter((e) => e <= cut).length - 1;
    assert.equal(got.length, wholeRecords, `cut at ${cut}`);
    assert.equal(end, ends[wholeRecords]);
  }
  for (let at = 0; at < whole.length; at += 3) {
    const bad = whole.slice();
    bad[at] ^= 0x40;
    const { records: got } = decodeRecords(bad);
    const hit = ends.findIndex((e) => e > at) - 1; // the record holding the changed byte
    assert.equal(got.length, hit, `byte ${at}`);
  }
});

test("a snapshot restores the tree, bytes and times; paths outside the roots are skipped", () => {
  a.FS.mkdirTree("/work/src/deep");
  a.FS.writeFile("/work/src/deep/x.py", "print(1)");
  a.FS.writeFile("/work/empty", "");
  a.FS.utime("/work/empty", 1_600_000_000_000, 1_600_000_000_000);
  a.FS.mkdirTree("/state/threads");
  a.FS.writeFile("/state/threads/t.jsonl", "{}\n");
  const snap = encodeRecords([begin("snapshot"), ...treeRecords(a.FS, "/work"), ...treeRecords(a.FS, "/state"), { header: { op: "end" } }]);
  const { records } = decodeRecords(snap);
  assert.ok(wellFormed(records, "snapshot"));
  applyRecords(b.FS, [
    ...records,
    { header: { op: "write", path: "/etc/evil" }, data: bytes("no") },
    { header: { op: "write", path: "/work/../etc/evil" }, data: bytes("no") },
    { header: { op: "mkdir", path: "/work/./d" } },
  ]);
  assert.deepEqual(tree(b.FS), tree(a.FS));
  assert.deepEqual(tree(b.FS, "/state"), tree(a.FS, "/state"));
  assert.equal(b.FS.stat("/work/empty").mtime.getTime(), 1_600_000_000_000);
  assert.ok(!b.FS.analyzePath("/etc/evil").exists);
  // A later file record where a folder is (a log over a snapshot): the file wins.
  applyRecords(b.FS, [{ header: { op: "write", path: "/work/src" }, data: bytes("now a file") }]);
  assert.equal(new TextDecoder().decode(b.FS.readFile("/work/src")), "now a file");
});

test("modes round-trip through a snapshot and the log; a record stored without one is 0o644", () => {
  for (const py of [a, b]) py.runPython("import shutil, os\nfor r in ('/work', '/state'):\n    shutil.rmtree(r)\n    os.mkdir(r)");
  const FS = a.FS;
  FS.mkdirTree("/work/ro/deep");
  FS.writeFile("/work/ro/deep/x", "x", { mode: 0o644 });
  FS.writeFile("/work/run.sh", "#!/bin/sh\n", { mode: 0o644 });
  FS.chmod("/work/run.sh", 0o755);
  FS.writeFile("/work/secret", "s", { mode: 0o600 });
  FS.utime("/work/ro/deep/x", 1_600_000_000_000, 1_600_000_000_000);
  FS.chmod("/work/ro/deep/x", 0o444);
  FS.chmod("/work/ro", 0o555); // a read-only folder: what is in it is written first
  const snap = encodeRecords([begin("snapshot"), ...treeRecords(FS, "/work"), { header: { op: "end" } }]);
  applyRecords(b.FS, decodeRecords(snap).records);
  assert.deepEqual(tree(b.FS), tree(FS));
  assert.equal(b.FS.lstat("/work/ro").mode & 0o7777, 0o555);
  assert.equal(b.FS.lstat("/work/ro/deep/x").mtime.getTime(), 1_600_000_000_000);
  // the log: a chmod alone, a file made in a read-only folder's sibling, a removal
  const log = new ChangeLog(FS);
  FS.chmod("/work/run.sh", 0o700);
  FS.chmod("/work/ro", 0o755);
  FS.unlink("/work/secret");
  FS.writeFile("/work/secret", "again", { mode: 0o644 });
  const records = log.entries.splice(0).flatMap((entry) => changeRecords(FS, entry));
  applyRecords(b.FS, decodeRecords(encodeRecords(records)).records);
  assert.deepEqual(tree(b.FS), tree(FS));
  // A workspace stored before modes were: its files are 0o644, as the harness makes them.
  applyRecords(b.FS, [{ header: { op: "write", path: "/work/old.txt", at: 0 }, data: bytes("old") }]);
  assert.equal(b.FS.lstat("/work/old.txt").mode & 0o7777, 0o644);
  // bad modes are ignored, never applied: only the permission bits count
  applyRecords(b.FS, [
    { header: { op: "chmod", path: "/work/old.txt", mode: "0777" } },
    { header: { op: "chmod", path: "/work/old.txt", mode: -1 } },
    { header: { op: "chmod", path: "/work/old.txt", mode: 0o170777 } },
  ]);
  assert.equal(b.FS.lstat("/work/old.txt").mode & 0o170000, 0o100000); // still a regular file
  assert.equal(b.FS.lstat("/work/old.txt").mode & 0o7777, 0o777);
});

test("replaying what the store logs gives the tree the worker has, flush after flush", () => {
  // Start both sides equal and empty.
  for (const py of [a, b]) py.runPython("import shutil, os\nfor r in ('/work', '/state'):\n    shutil.rmtree(r)\n    os.mkdir(r)");
  const log = new ChangeLog(a.FS);
  const flush = () => {
    const records = log.entries.splice(0).flatMap((entry) => changeRecords(a.FS, entry));
    const { records: back } = decodeRecords(encodeRecords(records));
    applyRecords(b.FS, back);
    assert.deepEqual(tree(b.FS), tree(a.FS));
    assert.deepEqual(tree(b.FS, "/state"), tree(a.FS, "/state"));
  };
  const FS = a.FS;
  FS.writeFile("/work/a.txt", "one");
  FS.mkdirTree("/work/d/e");
  FS.writeFile("/work/d/e/f", "f");
  flush();
  a.runPython("open('/work/a.txt', 'a').write(' two')"); // an append: only the new bytes
  FS.writeFile("/state/log", "1\n");
  flush();
  a.runPython("open('/state/log', 'a').write('2\\n')");
  FS.rename("/work/d", "/work/moved"); // a folder moved: its files written where they are now
  FS.writeFile("/work/moved/new", "n");
  FS.truncate("/work/a.txt", 2);
  flush();
  FS.rename("/work/a.txt", "/state/a.txt"); // between the roots
  FS.unlink("/work/moved/e/f");
  FS.writeFile("/work/gone", "x");
  FS.unlink("/work/gone");
  flush();
  const last = changeRecords(FS, { op: "write", path: "/state/log", from: 2 })[0];
  assert.equal(last.header.at, 2);
  assert.equal(new TextDecoder().decode(last.data), "2\n");
});
