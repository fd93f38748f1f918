// The filesystem hooks (embed/shared/fs-hooks.mjs) over a real Pyodide's MEMFS in Node:
// each kind of change is reported once, after it succeeded, whichever API made it; and
// the one "inside /work" notion. (Pyodide runs in Node unchanged: no stand-in FS.)
import assert from "node:assert/strict";
import { test } from "node:test";
import { loadPyodide } from "pyodide";
import { beforeLinkPossible, belowWork, inWork, onFsChange, plainPath } from "../../embed/shared/fs-hooks.mjs";

const pyodide = await loadPyodide();
const FS = pyodide.FS;
FS.mkdirTree("/work");

/** The changes `fn` makes, as [op, path, extra] (node left out). */
function changes(fn) {
  const seen = [];
  const stop = onFsChange(FS, ({ op, path, to, from, size, mode }) => seen.push([op, path, to ?? from ?? size ?? mode ?? null]));
  try {
    fn();
  } finally {
    stop();
  }
  return seen;
}

test("inside /work: the root and below; below: not the root; plain: absolute without dot parts", () => {
  assert.deepEqual(["/work", "/work/a", "/workx", "/wor", "/", "/tmp/work"].map(inWork), [true, true, false, false, false, false]);
  assert.deepEqual(["/work", "/work/a", "/work/a/b", "/workx/a"].map(belowWork), [false, true, true, false]);
  assert.deepEqual(["/work/a", "work/a", "/work/../etc", "/work/./a", 7].map(plainPath), [true, false, false, false, false]);
});

test("each operation is reported once, with its path", () => {
  // A new file: made, given its mode (open's O_CREAT), written.
  assert.deepEqual(
    changes(() => FS.writeFile("/work/a.txt", "hello")),
    [
      ["create", "/work/a.txt", null],
      ["chmod", "/work/a.txt", 0o100666],
      ["write", "/work/a.txt", 0],
    ],
  );
  // Rewritten: emptied (O_TRUNC), written.
  assert.deepEqual(
    changes(() => FS.writeFile("/work/a.txt", "hello!")),
    [
      ["truncate", "/work/a.txt", 0],
      ["write", "/work/a.txt", 0],
    ],
  );
  assert.deepEqual(
    changes(() => FS.mkdir("/work/d")),
    [["mkdir", "/work/d", null]],
  );
  assert.deepEqual(
    changes(() => FS.rename("/work/a.txt", "/work/d/b.txt")),
    [["rename", "/work/a.txt", "/work/d/b.txt"]],
  );
  assert.deepEqual(
    changes(() => FS.truncate("/work/d/b.txt", 2)),
    [["truncate", "/work/d/b.txt", 2]],
  );
  assert.deepEqual(
    changes(() => FS.chmod("/work/d/b.txt", 0o600)),
    [["chmod", "/work/d/b.txt", 0o100600]],
  );
  assert.deepEqual(
    changes(() => FS.unlink("/work/d/b.txt")),
    [["unlink", "/work/d/b.txt", null]],
  );
  assert.deepEqual(
    changes(() => FS.rmdir("/work/d")),
    [["rmdir", "/work/d", null]],
  );
});

test("a write at an offset says from where; Python's own file API is seen too", () => {
  FS.writeFile("/work/log", "0123");
  const seen = changes(() =>
    pyodide.runPython(`
with open("/work/log", "a") as f:
    f.write("45")
`),
  );
  assert.deepEqual(seen, [["write", "/work/log", 4]]);
});

test("a failed operation reports nothing", () => {
  FS.mkdirTree("/work/e");
  assert.deepEqual(
    changes(() => assert.throws(() => FS.mkdir("/work/e"))),
    [],
  );
  assert.deepEqual(
    changes(() => assert.throws(() => FS.rmdir("/work/nope"))),
    [],
  );
});

test("MEMFS is wrapped once however many listen; each listener hears every change", () => {
  const a = [];
  const b = [];
  const stopA = onFsChange(FS, (c) => a.push(c.op));
  const stopB = onFsChange(FS, (c) => b.push(c.op));
  FS.mkdir("/work/once");
  stopA();
  FS.rmdir("/work/once");
  stopB();
  assert.deepEqual(a, ["mkdir"]);
  assert.deepEqual(b, ["mkdir", "rmdir"]);
});

test("a symlink, a mount or a move into /work from outside loses the trust first", () => {
  let lost = 0;
  beforeLinkPossible(FS, () => lost++);
  FS.writeFile("/work/in", "x");
  FS.rename("/work/in", "/work/in2");
  assert.equal(lost, 0);
  FS.writeFile("/tmp/out", "x");
  FS.rename("/tmp/out", "/work/out");
  assert.equal(lost, 1);
  FS.symlink("/etc", "/tmp/link");
  assert.equal(lost, 2);
  FS.rename("/work/../work/out", "/work/x"); // a path the check does not read: lost too
  assert.equal(lost, 3);
});
