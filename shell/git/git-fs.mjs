// isomorphic-git's filesystem (its promise API: readFile, writeFile, mkdir, rmdir, unlink,
// stat, lstat, readdir, readlink, symlink, rm) over the shell's WorkFs
// (shell/fs-adapter.mjs). So git sees exactly what the shell sees: /work and /tmp
// through the harness's jail, the same write budget per command, no links. A symlink
// in a tree git checks out is refused (EACCES), not made.

export class GitFs {
  /** @param {import("../fs-adapter.mjs").WorkFs} work */
  constructor(work) {
    this.work = work;
  }

  /** @param {string} path @param {string | {encoding?: string}} [options] */
  async readFile(path, options) {
    const encoding = typeof options === "string" ? options : options?.encoding;
    if (encoding) return this.work.readFile(path, encoding);
    return this.work.readFileBuffer(path);
  }

  /** @param {string} path @param {string | Uint8Array} data @param {string | {encoding?: string, mode?: number}} [options] */
  async writeFile(path, data, options) {
    await this.work.writeFile(path, data, typeof options === "string" ? options : options?.encoding);
    const mode = typeof options === "object" ? options?.mode : undefined;
    if (typeof mode === "number") await this.work.chmod(path, mode & 0o777);
  }

  async mkdir(path) {
    await this.work.mkdir(path);
  }

  async rmdir(path) {
    await this.work.rmdir(path);
  }

  async rm(path, options = {}) {
    await this.work.rm(path, options);
  }

  async unlink(path) {
    const st = await this.work.lstat(path);
    if (st.isDirectory) throw Object.assign(new Error(`EISDIR: illegal operation on a directory, unlink '${path}'`), { code: "EISDIR" });
    await this.work.rm(path);
  }

  async stat(path) {
    return fromWork(await this.work.stat(path));
  }

  async lstat(path) {
    return fromWork(await this.work.lstat(path));
  }

  async readdir(path) {
    return this.work.readdir(path);
  }

  async readlink(path) {
    return this.work.readlink(path);
  }

  async symlink(target, path) {
    await this.work.symlink(target, path);
  }
}

/** A WorkFs stat as isomorphic-git wants it. */
function fromWork(st) {
  const ms = (d) => (d instanceof Date ? d.getTime() : 0);
  const type = st.isDirectory ? "dir" : st.isSymbolicLink ? "symlink" : "file";
  return nodeStats({
    type,
    mode: st.mode,
    size: st.size,
    mtimeMs: ms(st.mtime),
    ctimeMs: ms(st.ctime ?? st.mtime),
    ino: st.ino,
    dev: st.dev,
  });
}

/** Node's Stats shape, which isomorphic-git's index keeps (type checks are methods),
 * from a file's type ("file", "dir", "symlink"), permission bits, size and times; also
 * h.git()'s (embed/git/git-summary.mjs), over h.fs.
 * @param {{type: string, mode: number, size: number, mtimeMs: number, ctimeMs: number, ino?: number, dev?: number}} st */
export function nodeStats({ type, mode, size, mtimeMs, ctimeMs, ino = 0, dev = 0 }) {
  const kind = type === "dir" ? 0o40000 : type === "symlink" ? 0o120000 : 0o100000;
  return {
    type,
    mode: kind | (mode & 0o7777),
    size,
    ino,
    dev,
    uid: 0,
    gid: 0,
    mtimeMs,
    ctimeMs,
    isFile: () => type === "file",
    isDirectory: () => type === "dir",
    isSymbolicLink: () => type === "symlink",
  };
}
