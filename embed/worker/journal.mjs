// The change journal's feed in the harness worker: every change below /work, as the
// filesystem hooks tell it (shared/fs-hooks.mjs), kept here until Python's Journal
// (harness/journal.py) drains it. Consecutive records of one path and cause are folded
// (a new file is made, given its mode and written: one "created"), so a drain costs what
// changed, not how many writes made it. Bounded: past `limit` records between two drains
// the rest is dropped and the drain says so, and every reader resyncs.

import { belowWork, onFsChange } from "../shared/fs-hooks.mjs";

export const FEED_LIMIT = 250_000;

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
    /** @param {string} next the call the next changes are made by */
    setCause(next) {
      cause = String(next);
    },
    get cause() {
      return cause;
    },
    stop,
  };
}

/** One record for two consecutive ones of a path and cause, or null to keep both. */
function fold(before, kind) {
  if (before === "created" && (kind === "modified" || kind === "mode_changed")) return "created";
  if (before === "modified" && kind === "modified") return "modified";
  return null;
}
