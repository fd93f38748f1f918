// The one place that wraps Pyodide's filesystem, and the one notion of "inside /work".
//
// Every change to a file goes through MEMFS's node and stream operations, whichever API
// made it (Python's open(), FS.writeFile, a rename by the jail's tools, the sandbox's
// just-bash): the harness worker and the sandbox each wrap them once, here, and whoever
// needs to know what changed listens. In the harness worker: the persistent store
// (worker/persist.mjs) and the jail's symlink watch (worker/worker.mjs); in the sandbox
// (shell/sandbox.mjs): the change tracker that finds what a command wrote.

const WORK = "/work";

/** `/work` or a path below it. The argument is an absolute, normalized path (MEMFS's own). */
export const inWork = (path) => path === WORK || path.startsWith(`${WORK}/`);

/** A path below `/work` (a file or folder of the workspace; not the root itself). */
export const belowWork = (path) => path.startsWith(`${WORK}/`);

/** An absolute path without "." or ".." parts: what Emscripten's syscalls hand the FS API. */
export const plainPath = (path) =>
  typeof path === "string" && path.startsWith("/") && !path.split("/").some((s) => s === "." || s === "..");

/**
 * @typedef {(
 *   | {op: "create" | "mkdir" | "symlink" | "unlink" | "rmdir", path: string}
 *   | {op: "rename", path: string, to: string, replaced: boolean, dir: boolean}
 *   | {op: "write", path: string, node: object, from: number}
 *   | {op: "truncate", path: string, node: object, size: number}
 *   | {op: "chmod", path: string, node: object, mode: number}
 * )} FsChange
 *   One change, after it succeeded. `rename`: `replaced`, whether something was at `to`
 *   (and is gone now); `dir`, whether a folder moved. (A listener must not look the
 *   path up: during a rename the FS has not yet filed the node under its new name.) `write`: the file's bytes from `from` on may have
 *   changed (0: any); `truncate`: its size was set; `node` is the file's MEMFS node.
 */

/**
 * @typedef {(
 *   | {op: "create", path: string}
 *   | {op: "unlink" | "rmdir" | "write" | "setattr", path: string, node: object}
 *   | {op: "rename", path: string, node: object, to: string, target: object | undefined}
 * )} FsChangeAhead
 *   A change about to be made (it may still fail): `node` is the MEMFS node it changes
 *   (`target`: what a rename replaces, if anything). For the pre-images of checkpoints.
 */

const HUBS = new WeakMap(); // FS → its listeners {after, before}: MEMFS is wrapped once per FS

function hub(FS) {
  let listeners = HUBS.get(FS);
  if (!listeners) {
    listeners = { after: new Set(), before: new Set() };
    HUBS.set(FS, listeners);
    wrapMemfs(FS, listeners);
  }
  return listeners;
}

/**
 * Listen to every change MEMFS makes. Returns a function that stops listening.
 * @param {any} FS Pyodide's FS (Emscripten's; untyped here)
 * @param {(change: FsChange) => void} listener
 */
export function onFsChange(FS, listener) {
  const { after } = hub(FS);
  after.add(listener);
  return () => after.delete(listener);
}

/**
 * Listen to every change MEMFS is about to make, before it makes it (the node still
 * holds what it held). Returns a function that stops listening.
 * @param {any} FS
 * @param {(change: FsChangeAhead) => void} listener
 */
export function onFsChangeAhead(FS, listener) {
  const { before } = hub(FS);
  before.add(listener);
  return () => before.delete(listener);
}

function wrapMemfs(FS, { after: listeners, before: aheadListeners }) {
  const ops = FS.filesystems.MEMFS.ops_table;
  // A listener's failure must not fail the operation (which has happened already).
  const tellAll = (set, change) => {
    for (const listener of set) {
      try {
        listener(change);
      } catch (err) {
        console.error("pyharness: a filesystem listener failed", err);
      }
    }
  };
  const emit = (change) => tellAll(listeners, change);
  const ahead = (change) => {
    if (aheadListeners.size) tellAll(aheadListeners, change);
  };
  const join = (dir, name) => `${FS.getPath(dir)}/${name}`;
  /**
   * Call the original, then tell (only when it succeeded) what `before` returned, if given.
   * @param {any} table @param {string} name
   * @param {(earlier: any, ...args: any[]) => void} tell
   * @param {((...args: any[]) => any) | null} [before]
   */
  const after = (table, name, tell, before = null) => {
    const original = table[name];
    if (!original) return;
    table[name] = function (...args) {
      const earlier = before ? before(...args) : undefined;
      const result = original.apply(this, args);
      tell(earlier, ...args);
      return result;
    };
  };
  const child = (dir, name) => (dir.contents && Object.hasOwn(dir.contents, name) ? dir.contents[name] : undefined);
  after(
    ops.dir.node,
    "mknod",
    (_, parent, name, mode) => emit({ op: FS.isDir(mode) ? "mkdir" : "create", path: join(parent, name) }),
    (parent, name) => ahead({ op: "create", path: join(parent, name) }),
  );
  after(
    ops.dir.node,
    "symlink",
    (_, parent, name) => emit({ op: "symlink", path: join(parent, name) }),
    (parent, name) => ahead({ op: "create", path: join(parent, name) }),
  );
  after(
    ops.dir.node,
    "unlink",
    (_, parent, name) => emit({ op: "unlink", path: join(parent, name) }),
    (parent, name) => ahead({ op: "unlink", path: join(parent, name), node: child(parent, name) }),
  );
  after(
    ops.dir.node,
    "rmdir",
    (_, parent, name) => emit({ op: "rmdir", path: join(parent, name) }),
    (parent, name) => ahead({ op: "rmdir", path: join(parent, name), node: child(parent, name) }),
  );
  after(
    ops.dir.node,
    "rename",
    ([from, replaced, dir], _node, newDir, newName) => emit({ op: "rename", path: from, to: join(newDir, newName), replaced, dir }),
    (node, newDir, newName) => {
      const target = child(newDir, newName);
      const from = FS.getPath(node);
      ahead({ op: "rename", path: from, node, to: join(newDir, newName), target });
      return [from, target !== undefined, FS.isDir(node.mode)];
    },
  );
  after(
    ops.file.stream,
    "write",
    (_, stream, _buffer, _offset, _length, position) =>
      emit({
        op: "write",
        path: FS.getPath(stream.node),
        node: stream.node,
        from: Number.isInteger(position) && position > 0 ? position : 0,
      }),
    (stream) => ahead({ op: "write", path: FS.getPath(stream.node), node: stream.node }),
  );
  after(
    ops.file.stream,
    "msync",
    (_, stream) => emit({ op: "write", path: FS.getPath(stream.node), node: stream.node, from: 0 }),
    (stream) => ahead({ op: "write", path: FS.getPath(stream.node), node: stream.node }),
  );
  for (const table of [ops.file.node, ops.dir.node]) {
    after(
      table,
      "setattr",
      (_, node, attr) => {
        if (!attr) return;
        if (attr.size !== undefined && FS.isFile(node.mode)) emit({ op: "truncate", path: FS.getPath(node), node, size: attr.size });
        if (attr.mode !== undefined) emit({ op: "chmod", path: FS.getPath(node), node, mode: attr.mode });
      },
      (node, attr) => {
        if (attr && (attr.size !== undefined || attr.mode !== undefined)) ahead({ op: "setattr", path: FS.getPath(node), node });
      },
    );
  }
}

/**
 * Call `lost` before any operation that could put a symlink under /work: making a
 * symlink or a mount anywhere, or a rename into /work from elsewhere (or with a path the
 * check cannot read). The jail resolves paths without realpath only until then
 * (Workspace.trust_no_symlinks in harness/workspace/jail.py). Conservative by design: these are
 * FS API functions, above MEMFS, because a symlink is made without a MEMFS write.
 * @param {any} FS
 * @param {() => void} lost
 */
export function beforeLinkPossible(FS, lost) {
  for (const name of ["symlink", "mount"]) {
    const original = FS[name];
    FS[name] = function (...args) {
      lost();
      return original.apply(this, args);
    };
  }
  const rename = FS.rename;
  FS.rename = function (from, to) {
    if (!plainPath(from) || !plainPath(to) || (inWork(to) && !inWork(from))) lost();
    return rename.apply(this, [from, to]);
  };
}
