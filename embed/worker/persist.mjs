// A persistent workspace: /work (and /state, the threads) written through to the
// origin private file system (OPFS).
//
// Pyodide's in-memory filesystem stays the one working copy (every tool, h.fs and the
// sandbox's changes go through it at memory speed). What changes is logged by the
// filesystem hooks (shared/fs-hooks.mjs), and written to OPFS before the worker answers
// (before an `fsres`, a `tool_end` or a `run_end` leaves): once the page has seen one of
// those, the change survives a reload, close() or a killed worker.
//
// Stored as a snapshot of the tree plus an append-only log of what changed since
// (store-format.mjs): a flush is one append to one OPFS file, whatever it holds, and a
// boot reads two files, not one per file. The log is folded into a new snapshot when it
// outgrows the last one (off the reply path, when the worker is idle); the new snapshot
// counts only once its end record is on disk, so a crash at any point leaves the old
// one. (mountNativeFS + syncfs walks the whole tree on every sync and misses rewrites
// whose mtime goes back, so it cannot keep the promise above.)
// One writer per workspace: a Web Lock held for the worker's life.

import { belowWork, onFsChange } from "../shared/fs-hooks.mjs";
import { decodeName, encodeName, lockName, opfsRoot, ROOT_DIR, StorageError } from "../shared/opfs.mjs";
import { applyRecords, decodeRecords, encodeRecords, LEGACY_FILE_MODE, treeRecords, VERSION, wellFormed } from "./store-format.mjs";

const LOCK_WAIT_MS = 1500; // a reloaded page's old worker releases its lock within ~50 ms
const TAKEOVER_WAIT_MS = 10_000; // the holder saves what it has queued first

/**
 * @param {any} FS Pyodide's FS (untyped: its types come from @types/emscripten)
 * @param {{kind: "opfs" | "memory" | "auto", name: string, named: boolean, takeOver?: boolean}} options
 *   `named`: the page chose the name (then a workspace in use is an error; the default
 *   workspace in use falls back to memory, so a page with two harnesses keeps working);
 *   `takeOver`: a workspace in use is asked for (its holder saves, lets go and is told)
 * @returns {Promise<OpfsStore | ReturnType<typeof memoryStore>>}
 */
export async function openWorkspace(FS, { kind, name, named, takeOver = false }) {
  FS.mkdirTree("/work");
  FS.mkdirTree("/state"); // the threads (harness/threads.py), kept with the files
  if (kind === "memory") return memoryStore(name, "the page asked for memory");
  let root;
  try {
    root = await opfsRoot();
  } catch (err) {
    const why = `OPFS is not available here (${err.message})`;
    if (kind === "opfs") throw new StorageError(`${why}; use storage: "memory"`);
    return memoryStore(name, `${why}: the files are kept in memory and lost on reload`);
  }
  if (!(await holdLock(name)) && !(takeOver && (await askHolder(name)))) {
    const why = `the workspace '${name}' is open in another tab or window`;
    if (named || kind === "opfs") throw new StorageError(`${why}; close it there, or pass another workspace name`);
    return memoryStore(name, `${why}: this harness keeps its files in memory (pass a workspace name to keep them)`);
  }
  const dir = await (await root.getDirectoryHandle(ROOT_DIR, { create: true })).getDirectoryHandle(encodeName(name), { create: true });
  const stored = await restoreStored(FS, dir);
  const store = new OpfsStore(FS, name, dir, stored);
  if (stored.logSize > compactAt(stored.snapSize)) store.compactSoon();
  listenForTakeover(name, () => store.onTakeover?.());
  return store;
}

/**
 * Read the stored workspace into FS: the newest whole snapshot, then its log (a torn
 * tail is cut off, so later appends follow the last good record). A workspace of the
 * previous format (one OPFS file per file, in files/ and state/) is read the old way
 * once and written as a snapshot; the old folders are then removed.
 * @param {any} FS
 * @param {FileSystemDirectoryHandle} dir
 */
async function restoreStored(FS, dir) {
  /** @type {Map<string, any>} */
  const entries = new Map();
  for await (const [entryName, handle] of /** @type {any} */ (dir).entries()) entries.set(entryName, handle);
  const gens = [...entries.keys()]
    .map((n) => /^snap\.(\d+)$/.exec(n))
    .filter((m) => m !== null)
    .map((m) => Number(m[1]))
    .sort((x, y) => y - x);
  for (const gen of gens) {
    const snap = new Uint8Array(await (await entries.get(`snap.${gen}`).getFile()).arrayBuffer());
    const { records } = decodeRecords(snap);
    if (!wellFormed(records, "snapshot")) {
      await removeEntry(dir, `snap.${gen}`); // cut short while being written: the older one holds
      continue;
    }
    applyRecords(FS, records);
    let logSize = 0;
    const logHandle = entries.get(`log.${gen}`);
    if (logHandle) {
      const log = new Uint8Array(await (await logHandle.getFile()).arrayBuffer());
      const { records: changes, end } = decodeRecords(log);
      if (wellFormed(changes, "log")) applyRecords(FS, changes);
      logSize = wellFormed(changes, "log") ? end : 0;
      if (end < log.length || logSize === 0) await cutLog(logHandle, logSize);
      if (logSize === 0) logSize = encodeRecords([{ header: { op: "begin", kind: "log", version: VERSION } }]).length;
    } else {
      logSize = await writeLogStart(dir, gen); // cut off before its log was begun
    }
    for (const other of entries.keys()) {
      if (/^(snap|log)\.\d+$/.test(other) && other !== `snap.${gen}` && other !== `log.${gen}`) await removeEntry(dir, other);
    }
    return { gen, snapSize: snap.length, logSize, restored: countFiles(FS, "/work"), migrated: false };
  }
  // No snapshot: a new workspace, or one stored by the previous format.
  const old = entries.get("files")?.kind === "directory";
  if (old) {
    await restoreTree(FS, entries.get("files"), "/work");
    if (entries.get("state")?.kind === "directory") await restoreTree(FS, entries.get("state"), "/state");
  }
  const snapSize = await writeSnapshot(FS, dir, 1);
  const logSize = await writeLogStart(dir, 1);
  if (old) {
    await removeEntry(dir, "files");
    await removeEntry(dir, "state");
  }
  return { gen: 1, snapSize, logSize, restored: countFiles(FS, "/work"), migrated: old };
}

/** Compact the log into a new snapshot once it outgrows this (bytes). */
const compactAt = (snapSize) => Math.max(8 * 1024 * 1024, snapSize);

/** Write the whole tree as snapshot `gen` (complete once its end record is on disk). */
async function writeSnapshot(FS, dir, gen) {
  const body = [...treeRecords(FS, "/work", contents), ...treeRecords(FS, "/state", contents)];
  const bytes = encodeRecords([{ header: { op: "begin", kind: "snapshot", version: VERSION } }, ...body, { header: { op: "end" } }]);
  await writeWhole(await dir.getFileHandle(`snap.${gen}`, { create: true }), bytes);
  return bytes.length;
}

async function writeLogStart(dir, gen) {
  const bytes = encodeRecords([{ header: { op: "begin", kind: "log", version: VERSION } }]);
  await writeWhole(await dir.getFileHandle(`log.${gen}`, { create: true }), bytes);
  return bytes.length;
}

async function writeWhole(handle, bytes) {
  const access = await handle.createSyncAccessHandle();
  try {
    access.truncate(0);
    const written = access.write(bytes, { at: 0 });
    // Over the site's quota Chromium may not throw but report a wrong count.
    if (written !== bytes.byteLength) throw quotaError(`wrote ${written} of ${bytes.byteLength} bytes`);
    access.flush();
  } finally {
    access.close();
  }
}

async function cutLog(handle, size) {
  const access = await handle.createSyncAccessHandle();
  try {
    if (size === 0) {
      const start = encodeRecords([{ header: { op: "begin", kind: "log", version: VERSION } }]);
      access.truncate(0);
      access.write(start, { at: 0 });
    } else access.truncate(size);
    access.flush();
  } finally {
    access.close();
  }
}

async function removeEntry(dir, entryName) {
  try {
    await dir.removeEntry(entryName, { recursive: true });
  } catch (err) {
    if (err && err.name !== "NotFoundError") throw err;
  }
}

function countFiles(FS, root) {
  let count = 0;
  const walk = (path) => {
    for (const entryName of FS.readdir(path)) {
      if (entryName === "." || entryName === "..") continue;
      const child = `${path}/${entryName}`;
      const mode = FS.lstat(child).mode;
      if (FS.isDir(mode)) walk(child);
      else if (FS.isFile(mode)) count++;
    }
  };
  walk(root);
  return count;
}

/**
 * Ask the tab that holds the workspace to hand it over (`takeOver`), over a
 * BroadcastChannel of this origin: the holder writes what it has not written yet, tells
 * its page and ends its worker, which releases the lock. Resolves with whether the lock
 * is ours now. (Only this origin's pages and workers hear the channel: the sandbox,
 * opaque-origin, can neither hear nor send on it.)
 */
async function askHolder(name) {
  const channel = new BroadcastChannel(`pyharness-workspace:${name}`);
  try {
    channel.postMessage({ type: "takeover" });
    return await holdLock(name, TAKEOVER_WAIT_MS);
  } finally {
    channel.close();
  }
}

/** The holder's side: `onAsked` runs when another tab asks for the workspace. */
function listenForTakeover(name, onAsked) {
  const channel = new BroadcastChannel(`pyharness-workspace:${name}`);
  channel.onmessage = (event) => {
    if (event.data?.type === "takeover") onAsked();
  };
  return channel;
}
/** Keep a Web Lock on the workspace for this worker's life (retried briefly). */
async function holdLock(name, waitMs = LOCK_WAIT_MS) {
  const deadline = performance.now() + waitMs;
  for (;;) {
    const got = await new Promise((resolve) => {
      navigator.locks.request(lockName(name), { ifAvailable: true }, (lock) => {
        resolve(lock !== null);
        return lock === null ? undefined : new Promise(() => {}); // held until the worker ends
      });
    });
    if (got) return true;
    if (performance.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function quotaError(message) {
  const error = new Error(message);
  error.name = "QuotaExceededError";
  return error;
}

/** A MEMFS file's bytes without a copy (a view of its storage), or a copy otherwise. */
function contents(FS, path) {
  const node = FS.lookupPath(path).node;
  return node.contents instanceof Uint8Array ? node.contents.subarray(0, node.usedBytes) : FS.readFile(path);
}

function memoryStore(name, reason) {
  return { kind: "memory", name, restored: 0, reason, changes: 0, error: null, dirty: () => false, flush: async () => null };
}

/** The previous format's restore: one OPFS file per file (read once, to migrate). */
async function restoreTree(FS, dir, path) {
  for await (const [encoded, handle] of dir.entries()) {
    const child = `${path}/${decodeName(encoded)}`;
    if (handle.kind === "directory") {
      if (!FS.analyzePath(child).exists) FS.mkdir(child);
      await restoreTree(FS, handle, child);
    } else {
      const file = await handle.getFile();
      FS.writeFile(child, new Uint8Array(await file.arrayBuffer()), { mode: LEGACY_FILE_MODE });
      FS.utime(child, file.lastModified, file.lastModified);
    }
  }
}

class OpfsStore {
  constructor(FS, name, dir, { gen, snapSize, logSize, restored, migrated }) {
    this.kind = "opfs";
    this.name = name;
    this.restored = restored;
    this.migrated = migrated; // read from the previous format at this boot
    this.FS = FS;
    this.dir = dir; // the workspace's OPFS folder: snap.<gen> and log.<gen>
    this.gen = gen;
    this.snapSize = snapSize;
    this.logSize = logSize;
    this.changeLog = new ChangeLog(FS);
    this.log = this.changeLog.entries;
    this.chain = Promise.resolve(null);
    this.error = null; // {code, message} while changes could not be written
    this.compacting = false;
    /** @type {(() => void) | null} set by the worker: another tab asked for this workspace */
    this.onTakeover = null;
  }

  /** Every change logged, ever: the worker tells which call made some. */
  get changes() {
    return this.changeLog.changes;
  }

  dirty() {
    return this.log.length > 0;
  }

  /** Write what changed to OPFS (flushes run one at a time). Resolves with null once it
   * is on disk, or with {code, message} when it could not be written (storage full, or
   * refused): then what was not written stays queued, in order, and every later flush
   * tries again. What changed since the last flush is one append to the log. */
  flush() {
    this.chain = this.chain.then(() => this._flush());
    return this.chain;
  }

  async _flush() {
    const log = this.log.splice(0);
    if (log.length === 0) {
      this.error = null; // nothing queued: nothing fails to be written
      return null;
    }
    try {
      await this._append(encodeRecords(log.flatMap((entry) => changeRecords(this.FS, entry))));
    } catch (err) {
      this.log.unshift(...log);
      return this._failed(err, `${log.length} change(s), the first ${log[0].op} ${log[0].to ?? log[0].path}`);
    }
    this.error = null;
    if (this.logSize > compactAt(this.snapSize)) this.compactSoon();
    return null;
  }

  _failed(err, what) {
    const quota = err && err.name === "QuotaExceededError";
    const why = err?.message ? err.message : String(err);
    this.error = {
      code: quota ? "ENOSPC" : "EIO",
      message: `${quota ? "the browser's storage for this site is full" : "the browser's storage refused a write"} (${what}: ${why})`,
    };
    return this.error;
  }

  /** Append bytes to the log, all or nothing (a short write is cut off again). */
  async _append(bytes) {
    const handle = await this.dir.getFileHandle(`log.${this.gen}`, { create: true });
    const access = await handle.createSyncAccessHandle();
    try {
      const size = access.getSize();
      let written = 0;
      try {
        written = access.write(bytes, { at: size });
      } finally {
        if (written !== bytes.byteLength) access.truncate(size);
      }
      // Over the site's quota Chromium may not throw but report a wrong count.
      if (written !== bytes.byteLength) throw quotaError(`wrote ${written} of ${bytes.byteLength} bytes`);
      access.flush();
      this.logSize = size + bytes.byteLength;
    } finally {
      access.close();
    }
  }

  /** Fold the log into a new snapshot when the worker is idle (in the flush chain, so
   * no flush runs meanwhile; the queued changes are in the snapshot). */
  compactSoon() {
    if (this.compacting) return;
    this.compacting = true;
    setTimeout(() => {
      this.chain = this.chain.then(() => this._compact());
    }, 250);
  }

  async _compact() {
    const queued = this.log.splice(0);
    const next = this.gen + 1;
    try {
      const snapSize = await writeSnapshot(this.FS, this.dir, next);
      const logSize = await writeLogStart(this.dir, next);
      const was = this.gen;
      this.gen = next;
      this.snapSize = snapSize;
      this.logSize = logSize;
      await removeEntry(this.dir, `snap.${was}`);
      await removeEntry(this.dir, `log.${was}`);
      this.error = null;
      return null;
    } catch (err) {
      this.log.unshift(...queued); // still in the old log's terms: appended there later
      await removeEntry(this.dir, `snap.${next}`).catch(() => {});
      await removeEntry(this.dir, `log.${next}`).catch(() => {});
      return this._failed(err, "compacting the log");
    } finally {
      this.compacting = false;
    }
  }
}

/**
 * A logged change as log records, with the bytes it has now (a later entry covers
 * anything that is gone since). A rename is the source gone and the target written.
 * Exported for tests/js-unit/persist-log.test.mjs.
 * @param {any} FS
 * @param {ChangeLog["entries"][number]} entry
 * @returns {{header: object, data?: Uint8Array}[]}
 */
export function changeRecords(FS, { op, path, to, from }) {
  if (op === "remove") return [{ header: { op: "remove", path } }];
  if (op === "rename") {
    const moved = [{ header: { op: "remove", path } }, { header: { op: "remove", path: to } }];
    if (!FS.analyzePath(to).exists) return moved;
    if (FS.isDir(FS.lstat(to).mode)) return [...moved, { header: { op: "mkdir", path: to } }, ...treeRecords(FS, to, contents)];
    return [...moved, ...changeRecords(FS, { op: "write", path: to, from: 0 })];
  }
  if (!FS.analyzePath(path).exists) return [];
  const st = FS.lstat(path);
  const mode = st.mode & 0o7777;
  if (op === "chmod") return FS.isDir(st.mode) || FS.isFile(st.mode) ? [{ header: { op: "chmod", path, mode } }] : [];
  if (op === "mkdir") return FS.isDir(st.mode) ? [{ header: { op: "mkdir", path, mode } }] : [];
  if (!FS.isFile(st.mode)) return [];
  const bytes = contents(FS, path);
  const at = from > 0 && from <= bytes.length ? from : 0; // an append: only the new bytes
  return [{ header: { op: "write", path, at, mtime: st.mtime.getTime(), mode }, data: bytes.subarray(at) }];
}

/**
 * What the store has still to write: every change below /work and /state, in order
 * (shared/fs-hooks.mjs), with consecutive writes of one file coalesced into one entry
 * that remembers the first byte they may have changed (an append writes only its new
 * bytes). A rename between the two roots is a remove and a write. Exported for
 * tests/js-unit/persist-log.test.mjs.
 */
export class ChangeLog {
  constructor(FS) {
    /** @type {{op: "write" | "mkdir" | "remove" | "rename" | "chmod", path: string, to?: string, from?: number}[]} */
    this.entries = [];
    this.changes = 0;
    // What is stored: what lies below the two roots (the roots are OPFS folders already).
    const stored = (p) => belowWork(p) || p.startsWith("/state/");
    onFsChange(FS, (change) => {
      const { op, path } = change;
      if (op === "rename") {
        const { to } = change;
        if (stored(path) && stored(to) && path.split("/")[1] === to.split("/")[1]) this._add("rename", path, to);
        else if (stored(path) && stored(to)) {
          this._add("remove", path);
          this._add("write", to);
        } else if (stored(path)) this._add("remove", path);
        else if (stored(to)) this._add("write", to); // moved in from outside /work (not done by the harness)
        return;
      }
      if (!stored(path)) return;
      if (op === "chmod") this._add("chmod", path);
      else if (op === "mkdir") this._add("mkdir", path);
      else if (op === "unlink" || op === "rmdir") this._add("remove", path);
      else if (op === "create") this._add("write", path);
      else if (op === "write") this._add("write", path, undefined, change.from);
      else if (op === "truncate") this._add("write", path, undefined, change.size);
    });
  }

  /** `from`: for a write, the first byte it may have changed (0: any). */
  _add(op, path, to = undefined, from = 0) {
    this.changes++;
    const last = this.entries[this.entries.length - 1];
    // a mode given to what was just written: the write's record carries the mode it has then
    if (op === "chmod" && last && last.path === path && last.op !== "remove" && last.op !== "rename") return;
    if (op === "write" && last && last.op === "write" && last.path === path) {
      last.from = Math.min(last.from, from); // coalesced
      return;
    }
    this.entries.push(op === "write" ? { op, path, from } : { op, path, to });
  }
}
