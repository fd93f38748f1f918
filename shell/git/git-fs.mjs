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
    return stats(await this.work.stat(path));
  }

  async lstat(path) {
    return stats(await this.work.lstat(path));
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

/** Node's Stats shape, which isomorphic-git's index keeps (type checks are methods). */
function stats(st) {
  const type = st.isDirectory ? "dir" : st.isSymbolicLink ? "symlink" : "file";
  const ms = (d) => (d instanceof Date ? d.getTime() : 0);
  return {
    type,
    mode: st.isDirectory ? 0o40000 | st.mode : st.isSymbolicLink ? 0o120000 | st.mode : 0o100000 | st.mode,
    size: st.size,
    ino: st.ino ?? 0,
    dev: st.dev ?? 0,
    uid: 0,
    gid: 0,
    mtimeMs: ms(st.mtime),
    ctimeMs: ms(st.ctime ?? st.mtime),
    isFile: () => type === "file",
    isDirectory: () => type === "dir",
    isSymbolicLink: () => type === "symlink",
  };
}
