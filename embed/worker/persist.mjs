// A persistent workspace: /work written through to the origin private file system (OPFS).
//
// Pyodide's in-memory filesystem stays the one working copy (every tool, h.fs and the
// sandbox's changes go through it at memory speed). What changes under /work is logged
// by wrapping MEMFS's node and stream operations, which every path goes through, and the
// log is written to OPFS before the worker answers (before an `fsres`, a `tool_end` or a
// `run_end` leaves): once the page has seen one of those, the change survives a reload,
// close() or a killed worker. (mountNativeFS + syncfs walks the whole tree on every sync
// and misses rewrites whose mtime goes back, so it cannot keep that promise.)
// One writer per workspace: a Web Lock held for the worker's life.

import { belowWork, onFsChange } from "../shared/fs-hooks.mjs";
import { decodeName, encodeName, lockName, opfsRoot, ROOT_DIR, StorageError } from "../shared/opfs.mjs";

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
  const roots = {
    work: await dir.getDirectoryHandle("files", { create: true }),
    state: await dir.getDirectoryHandle("state", { create: true }),
  };
  const restored = await restore(FS, roots.work, "/work");
  await restore(FS, roots.state, "/state");
  const store = new OpfsStore(FS, name, roots, restored);
  listenForTakeover(name, () => store.onTakeover?.());
  return store;
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

async function restore(FS, dir, path) {
  let count = 0;
  for await (const [encoded, handle] of dir.entries()) {
    const child = `${path}/${decodeName(encoded)}`;
    if (handle.kind === "directory") {
      if (!FS.analyzePath(child).exists) FS.mkdir(child);
      count += await restore(FS, handle, child);
    } else {
      const file = await handle.getFile();
      FS.writeFile(child, new Uint8Array(await file.arrayBuffer()));
      FS.utime(child, file.lastModified, file.lastModified);
      count++;
    }
  }
  return count;
}

class OpfsStore {
  constructor(FS, name, roots, restored) {
    this.kind = "opfs";
    this.name = name;
    this.restored = restored;
    this.FS = FS;
    this.roots = roots; // "work" → /work's OPFS directory, "state" → /state's
    this.changeLog = new ChangeLog(FS);
    this.log = this.changeLog.entries;
    this.chain = Promise.resolve(null);
    this.error = null; // {code, message} while changes could not be written
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
   * tries again. */
  flush() {
    this.chain = this.chain.then(() => this._flush());
    return this.chain;
  }

  async _flush() {
    const log = this.log.splice(0);
    for (let i = 0; i < log.length; i++) {
      try {
        await this._apply(log[i]);
      } catch (err) {
        this.log.unshift(...log.slice(i));
        const quota = err && err.name === "QuotaExceededError";
        const why = err?.message ? err.message : String(err);
        this.error = {
          code: quota ? "ENOSPC" : "EIO",
          message: `${quota ? "the browser's storage for this site is full" : "the browser's storage refused a write"} (${log[i].op} ${log[i].to ?? log[i].path}: ${why})`,
        };
        return this.error;
      }
    }
    this.error = null;
    return null;
  }

  /** @param {ChangeLog["entries"][number]} entry */
  async _apply({ op, path, to, from }) {
    const FS = this.FS;
    if (op === "remove") return this._remove(path);
    if (op === "rename") {
      await this._remove(to);
      await this._copyTree(to);
      return this._remove(path);
    }
    const at = FS.analyzePath(path);
    if (!at.exists) return; // gone since: a later entry removes it
    const mode = FS.lstat(path).mode;
    if (op === "mkdir" && FS.isDir(mode)) return void (await this._dir(path, true));
    if (op === "write" && FS.isFile(mode)) return this._write(path, contents(FS, path), from);
  }

  async _copyTree(path) {
    const FS = this.FS;
    if (!FS.analyzePath(path).exists) return;
    const mode = FS.lstat(path).mode;
    if (FS.isFile(mode)) return this._write(path, FS.readFile(path));
    if (!FS.isDir(mode)) return;
    await this._dir(path, true);
    for (const name of FS.readdir(path)) if (name !== "." && name !== "..") await this._copyTree(`${path}/${name}`);
  }

  /** The OPFS directory of a /work or /state path. */
  async _dir(path, create) {
    const parts = path.split("/");
    let dir = this.roots[parts[1]];
    for (const part of parts.slice(2)) if (part) dir = await dir.getDirectoryHandle(encodeName(part), { create });
    return dir;
  }

  /** Write a file's bytes; only those from `from` on when the rest is on disk already
   * (an append, as a thread's journal or a log file grows, writes just the new bytes). */
  async _write(path, bytes, from = 0) {
    const cut = path.lastIndexOf("/");
    const parent = await this._dir(path.slice(0, cut), true);
    const handle = await parent.getFileHandle(encodeName(path.slice(cut + 1)), { create: true });
    const access = await handle.createSyncAccessHandle();
    try {
      const at = from > 0 && from <= bytes.length && access.getSize() >= from ? from : 0;
      const data = at ? bytes.subarray(at) : bytes;
      const written = access.write(data, { at });
      // Over the site's quota Chromium may not throw but report a wrong count.
      if (written !== data.byteLength) throw quotaError(`wrote ${written} of ${data.byteLength} bytes`);
      access.truncate(bytes.length);
      access.flush();
    } finally {
      access.close();
    }
  }

  async _remove(path) {
    const cut = path.lastIndexOf("/");
    try {
      const parent = await this._dir(path.slice(0, cut), false);
      await parent.removeEntry(encodeName(path.slice(cut + 1)), { recursive: true });
    } catch (err) {
      if (err && err.name !== "NotFoundError" && err.name !== "TypeMismatchError") throw err;
    }
  }
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
    /** @type {{op: "write" | "mkdir" | "remove" | "rename", path: string, to?: string, from?: number}[]} */
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
      if (!stored(path) || op === "chmod") return; // OPFS keeps no modes
      if (op === "mkdir") this._add("mkdir", path);
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
    if (op === "write" && last && last.op === "write" && last.path === path) {
      last.from = Math.min(last.from, from); // coalesced
      return;
    }
    this.entries.push(op === "write" ? { op, path, from } : { op, path, to });
  }
}
