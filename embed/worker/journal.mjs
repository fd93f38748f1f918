// The change journal's feed in the harness worker: every change below /work, as the
// filesystem hooks tell it (shared/fs-hooks.mjs), kept here until Python's Journal
// (harness/workspace/journal.py) drains it. Consecutive records of one path and cause are folded
// (a new file is made, given its mode and written: one "created"), so a drain costs what
// changed, not how many writes made it. Bounded: past `limit` records between two drains
// the rest is dropped and the drain says so, and every reader resyncs.
//
// While the cause is a checkpointed one (`setCause(cause, true)`: a run's tool call, a
// revert), the feed also takes the *pre-image* of each path below /work on its first
// change since `newEpoch()`, before the change (shared/fs-hooks.mjs' onFsChangeAhead):
// absent, a folder (its mode; a folder renamed or removed, with everything below it),
// or a file (a copy of its bytes, its mode). harness/workspace/checkpoints.py keeps them.

import { belowWork, onFsChange, onFsChangeAhead } from "../shared/fs-hooks.mjs";

const FEED_LIMIT = 250_000;

/**
 * @param {any} FS Pyodide's FS
 * @param {number} [limit]
 */
export function journalFeed(FS, limit = FEED_LIMIT) {
  /** @type {[kind: string, path: string, source: string | null, cause: string][]} */
  let pending = [];
  let lost = false;
  let cause = "";
  const add = (kind, path, source = null) => {
    if (lost) return;
    const last = pending[pending.length - 1];
    if (last && last[1] === path && last[3] === cause && source === null) {
      const folded = fold(last[0], kind);
      if (folded !== null) {
        last[0] = folded;
        return;
      }
    }
    if (pending.length >= limit) {
      lost = true;
      pending = [];
      return;
    }
    pending.push([kind, path, source, cause]);
  };
  let capture = false;
  /** @type {[path: string, kind: string, data: Uint8Array | undefined, mode: number | undefined, complete: boolean][]} (undefined: None in Python) */
  let befores = [];
  const taken = new Set(); // paths with a pre-image in this epoch
  const whole = new Set(); // ... of which everything below is taken too
  const coveredAbove = (path) => {
    for (let i = path.lastIndexOf("/"); i > 5; i = path.lastIndexOf("/", i - 1)) if (whole.has(path.slice(0, i))) return true;
    return false;
  };
  /** The pre-image of `path` (held by `node`, or absent), with its tree when `deep`. */
  const take = (path, node, deep) => {
    if (belowWork(path) && !taken.has(path) && !coveredAbove(path)) record(path, node, deep);
  };
  const record = (path, node, deep) => {
    taken.add(path);
    if (node === undefined || node === null) {
      whole.add(path);
      befores.push([path, "absent", undefined, undefined, true]);
    } else if (FS.isDir(node.mode)) {
      if (deep) whole.add(path);
      befores.push([path, "dir", undefined, node.mode & 0o7777, deep]);
      if (deep) below(path, node);
    } else if (FS.isFile(node.mode)) {
      whole.add(path);
      const used = node.usedBytes ?? 0;
      const data = node.contents
        ? Uint8Array.from(node.contents.subarray ? node.contents.subarray(0, used) : node.contents.slice(0, used))
        : new Uint8Array(0);
      befores.push([path, "file", data, node.mode & 0o7777, true]);
    }
    // a symlink or device below /work has no pre-image (none can be made there)
  };
  /** Everything below a folder taken whole, but what this epoch took already. */
  const below = (path, node) => {
    for (const [name, sub] of Object.entries(node.contents ?? {})) {
      const subPath = `${path}/${name}`;
      if (!taken.has(subPath)) record(subPath, sub, true);
      else if (!whole.has(subPath) && FS.isDir(sub.mode)) below(subPath, sub); // its mode alone was taken
    }
  };
  const stopAhead = onFsChangeAhead(FS, (change) => {
    if (!capture) return;
    const { op, path } = change;
    if (op === "create") take(path, null, true);
    else if (op === "rename") {
      take(path, change.node, true);
      take(change.to, change.target, true);
    } else take(path, change.node, op !== "setattr" || FS.isFile(/** @type {any} */ (change.node).mode));
  });
  const stop = onFsChange(FS, (change) => {
    const { op, path } = change;
    if (op === "rename") {
      const { to, dir } = change;
      if (belowWork(to) && change.replaced) add(dir ? "dir_deleted" : "deleted", to); // what was there
      if (belowWork(path) && belowWork(to)) add("renamed", to, path);
      else if (belowWork(path)) add(dir ? "dir_deleted" : "deleted", path);
      else if (belowWork(to)) add(dir ? "dir_created" : "created", to); // moved in from outside
      return;
    }
    if (!belowWork(path)) return;
    if (op === "create" || op === "symlink") add("created", path);
    else if (op === "mkdir") add("dir_created", path);
    else if (op === "unlink") add("deleted", path);
    else if (op === "rmdir") add("dir_deleted", path);
    else if (op === "write" || op === "truncate") add("modified", path);
    else if (op === "chmod") add("mode_changed", path);
  });
  return {
    /** The records since the last drain, and whether some were lost. */
    drain() {
      const out = { records: pending, lost };
      pending = [];
      lost = false;
      return out;
    },
    /** @param {string} next the call the next changes are made by @param {boolean} [checkpointed] take pre-images */
    setCause(next, checkpointed = false) {
      cause = String(next);
      capture = Boolean(checkpointed);
    },
    get capture() {
      return capture;
    },
    /** Pre-images are taken afresh: a path's next change is its first again. */
    newEpoch() {
      taken.clear();
      whole.clear();
      befores = [];
    },
    /** The pre-images taken since the last call. */
    befores() {
      const out = befores;
      befores = [];
      return out;
    },
    get cause() {
      return cause;
    },
    stop: () => {
      stop();
      stopAhead();
    },
  };
}

/** One record for two consecutive ones of a path and cause, or null to keep both. */
function fold(before, kind) {
  if (before === "created" && (kind === "modified" || kind === "mode_changed")) return "created";
  if (before === "modified" && kind === "modified") return "modified";
  return null;
}
