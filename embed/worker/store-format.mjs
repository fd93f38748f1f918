// The stored workspace's format: a snapshot of the tree and an append-only log of what
// changed since, each a run of records (worker/persist.mjs reads and writes them; this
// module only encodes, decodes and applies, so it runs in Node: tests/js-unit/).
//
// A record: u32 header length, the header (JSON: {op, path, to?, at?, mtime?, mode?}), u32
// data length, the data, u32 FNV-1a of header and data; all little-endian. `mode` (the
// permission bits of a `write`'s file or a `mkdir`'s folder; a `chmod` record carries only
// it) came later within version 1: a record without it is of a workspace stored before,
// whose files are given 0o644 (what every writer of /work makes), its folders the FS's
// default. The ops a reader does not know are skipped, so an older reader still opens a
// newer store (without the modes). The first record
// of a file names it ({op: "begin", kind: "snapshot" | "log", version}); a snapshot ends
// with {op: "end"}: one without its end was cut short and is not used. Reading stops at
// the first record that is short or whose check fails: a torn tail is dropped, never
// half-applied.

export const VERSION = 1;
/** The mode of a file whose record has none (stored before modes were). */
export const LEGACY_FILE_MODE = 0o644;
const enc = new TextEncoder();
const dec = new TextDecoder();

/** FNV-1a, 32 bits, over several byte arrays. */
function fnv(parts) {
  let h = 0x811c9dc5;
  for (const bytes of parts) {
    for (let i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes[i], 0x01000193);
  }
  return h >>> 0;
}

/**
 * The bytes of records, in one buffer.
 * @param {{header: object, data?: Uint8Array}[]} records
 */
export function encodeRecords(records) {
  const heads = records.map((r) => enc.encode(JSON.stringify(r.header)));
  let size = 0;
  records.forEach((r, i) => {
    size += 12 + heads[i].length + (r.data?.length ?? 0);
  });
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  let at = 0;
  records.forEach((r, i) => {
    const head = heads[i];
    const data = r.data ?? new Uint8Array(0);
    view.setUint32(at, head.length, true);
    out.set(head, at + 4);
    at += 4 + head.length;
    view.setUint32(at, data.length, true);
    out.set(data, at + 4);
    at += 4 + data.length;
    view.setUint32(at, fnv([head, data]), true);
    at += 4;
  });
  return out;
}

/**
 * The records of `bytes`, up to the first that is short or fails its check.
 * @param {Uint8Array} bytes
 * @returns {{records: {header: any, data: Uint8Array}[], end: number}} `end`: where the good part ends
 */
export function decodeRecords(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const records = [];
  let at = 0;
  for (;;) {
    if (at + 4 > bytes.length) break;
    const headLen = view.getUint32(at, true);
    if (at + 8 + headLen > bytes.length) break;
    const head = bytes.subarray(at + 4, at + 4 + headLen);
    const dataLen = view.getUint32(at + 4 + headLen, true);
    const dataAt = at + 8 + headLen;
    if (dataAt + dataLen + 4 > bytes.length) break;
    const data = bytes.subarray(dataAt, dataAt + dataLen);
    if (view.getUint32(dataAt + dataLen, true) !== fnv([head, data])) break;
    let header;
    try {
      header = JSON.parse(dec.decode(head));
    } catch {
      break;
    }
    if (header === null || typeof header !== "object" || typeof header.op !== "string") break;
    records.push({ header, data });
    at = dataAt + dataLen + 4;
  }
  return { records, end: at };
}

/** Whether `records` are a whole file of `kind` (a snapshot must also have its end). */
export function wellFormed(records, kind) {
  const first = records[0]?.header;
  if (first?.op !== "begin" || first.kind !== kind || first.version !== VERSION) return false;
  return kind !== "snapshot" || records[records.length - 1].header.op === "end";
}

/** Where stored paths may go: below /work or /state, no "." or ".." parts. */
function storedPath(path) {
  return (
    typeof path === "string"
    && (path.startsWith("/work/") || path.startsWith("/state/"))
    && !path.split("/").some((s, i) => i > 0 && (s === "" || s === "." || s === ".."))
  );
}

function removeTree(FS, path) {
  const at = FS.analyzePath(path);
  if (!at.exists) return;
  if (FS.isDir(FS.lstat(path).mode)) {
    for (const name of FS.readdir(path)) if (name !== "." && name !== "..") removeTree(FS, `${path}/${name}`);
    FS.rmdir(path);
  } else FS.unlink(path);
}

function mkdirs(FS, path) {
  const parts = path.split("/");
  for (let i = 2; i <= parts.length; i++) {
    const dir = parts.slice(0, i).join("/");
    const at = FS.analyzePath(dir);
    if (at.exists && !FS.isDir(FS.lstat(dir).mode)) FS.unlink(dir);
    if (!at.exists || !FS.isDir(FS.lstat(dir).mode)) FS.mkdir(dir);
  }
}

/** A stored mode: permission bits only, or undefined when the record has none. */
function storedMode(header) {
  return Number.isInteger(header.mode) && header.mode >= 0 ? header.mode & 0o7777 : undefined;
}

/**
 * Apply records to Pyodide's FS (a restore). Records with a path outside /work and
 * /state are skipped. Modes are set last, once every file is written (a folder stored
 * read-only still gets what is in it). Returns how many were applied.
 * @param {any} FS
 * @param {{header: any, data: Uint8Array}[]} records
 */
export function applyRecords(FS, records) {
  let applied = 0;
  // Folders known to be there: a snapshot lists a folder before what is in it, so most
  // writes need no look at their parent (a boot applies every file of the workspace).
  const dirs = new Set(["/work", "/state"]);
  /** @type {Map<string, [mode: number, dir: boolean, node?: any]>} the modes to set at the end (a file: its node) */
  const modes = new Map();
  const ensureDir = (dir) => {
    if (dirs.has(dir)) return;
    mkdirs(FS, dir);
    dirs.add(dir);
  };
  const forget = (path) => {
    const dir = dirs.has(path);
    for (const d of dirs) if (d === path || d.startsWith(`${path}/`)) dirs.delete(d);
    modes.delete(path);
    if (dir) for (const p of modes.keys()) if (p.startsWith(`${path}/`)) modes.delete(p);
  };
  for (const { header, data } of records) {
    const { op, path } = header;
    if (op === "begin" || op === "end" || !storedPath(path)) continue;
    const mode = storedMode(header);
    if (op === "mkdir") {
      ensureDir(path);
      if (mode !== undefined) modes.set(path, [mode, true]);
    } else if (op === "chmod") {
      if (mode === undefined || !FS.analyzePath(path).exists) continue;
      modes.set(path, [mode, FS.isDir(FS.lstat(path).mode)]);
    } else if (op === "remove") {
      removeTree(FS, path);
      forget(path);
    } else if (op === "write") {
      ensureDir(path.slice(0, path.lastIndexOf("/")));
      if (dirs.has(path)) {
        removeTree(FS, path);
        forget(path);
      }
      const at = Number.isInteger(header.at) && header.at > 0 ? header.at : 0;
      let bytes = data;
      if (at > 0) {
        // An append: the bytes before `at` are what the file already holds.
        const before = FS.analyzePath(path).exists ? FS.readFile(path) : new Uint8Array(0);
        bytes = new Uint8Array(at + data.length);
        bytes.set(before.subarray(0, at));
        bytes.set(data, at);
      }
      let node;
      try {
        node = writeFile(FS, path, bytes);
      } catch {
        removeTree(FS, path); // a folder there that this call did not make: the file wins
        node = writeFile(FS, path, bytes);
      }
      // The node the write opened, so neither the time nor the mode looks the path up again
      // (a boot applies every file of the workspace).
      if (Number.isFinite(header.mtime)) node.node_ops.setattr(node, { atime: header.mtime, mtime: header.mtime });
      if (mode !== undefined) modes.set(path, [mode, false, node]);
    } else continue;
    applied++;
  }
  for (const [path, [mode, dir, node]] of modes) {
    // A file written here is known by its node (a later remove or write of it replaced the
    // entry); others take one lstat (not analyzePath, which looks the parent up again).
    if (node && (node.mode & 0o7777) === mode) continue;
    let st;
    try {
      st = FS.lstat(path);
    } catch {
      continue; // gone since
    }
    if (FS.isDir(st.mode) !== dir || (st.mode & 0o7777) === mode) continue;
    const mtime = st.mtime.getTime();
    FS.chmod(path, mode);
    if (FS.lstat(path).mtime.getTime() !== mtime) FS.utime(path, mtime, mtime); // (some FS versions touch it)
  }
  return applied;
}

/** FS.writeFile, returning the node it wrote (a new file's mode: LEGACY_FILE_MODE; an
 * old file keeps its own). */
function writeFile(FS, path, bytes) {
  const stream = FS.open(path, "w", LEGACY_FILE_MODE);
  try {
    FS.write(stream, bytes, 0, bytes.byteLength, undefined);
    return stream.node;
  } finally {
    FS.close(stream);
  }
}

/**
 * The records of everything below `root` as it is now in FS (a snapshot's body).
 * @param {any} FS
 * @param {string} root "/work", "/state", or a folder below them
 * @param {(FS: any, path: string) => Uint8Array} [read] a file's bytes (a view will do)
 */
export function treeRecords(FS, root, read = (fs, path) => fs.readFile(path)) {
  const out = [];
  const walk = (dir) => {
    for (const name of FS.readdir(dir).sort()) {
      if (name === "." || name === "..") continue;
      const path = `${dir}/${name}`;
      const st = FS.lstat(path);
      if (FS.isDir(st.mode)) {
        out.push({ header: { op: "mkdir", path, mode: st.mode & 0o7777 } });
        walk(path);
      } else if (FS.isFile(st.mode)) {
        out.push({ header: { op: "write", path, mtime: st.mtime.getTime(), mode: st.mode & 0o7777 }, data: read(FS, path) });
      }
    }
  };
  if (FS.analyzePath(root).exists) walk(root);
  return out;
}
