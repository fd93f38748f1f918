// just-bash's IFileSystem over the worker's one filesystem (Pyodide's FS).
//
// The shell sees exactly two mounts, /work and /tmp, under a virtual "/" that lists
// only them. Every path is checked by the harness's one jail (Python's
// Workspace.resolve, passed in as `resolve`); a path outside the mounts fails as if it
// did not exist. Symlinks and hard links cannot be created. Errors carry Node-style
// messages ("ENOENT: no such file or directory, open '/work/x'"): just-bash's commands
// match on that text.

/** just-bash's bytes: a latin1 string (a char a byte) under an opaque type.
 * @typedef {Awaited<ReturnType<NonNullable<import("just-bash/browser").IFileSystem["readFileBytes"]>>>} ByteString */

const DESCRIPTIONS = {
  ENOENT: "no such file or directory",
  EEXIST: "file already exists",
  ENOTDIR: "not a directory",
  EISDIR: "illegal operation on a directory",
  ENOTEMPTY: "directory not empty",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  EINVAL: "invalid argument",
  ENOSPC: "no space left on device",
  EXDEV: "cross-device link not permitted",
  ELOOP: "too many symbolic links encountered",
  EBUSY: "resource busy or locked",
};

class FsError extends Error {
  constructor(code, syscall, path, detail = "") {
    super(`${code}: ${DESCRIPTIONS[code] || "i/o error"}${detail}, ${syscall} '${path}'`);
    this.code = code;
    this.syscall = syscall;
    this.path = path;
  }
}

const MOUNTS = ["tmp", "work"];
const ROOT_STAT = { isFile: false, isDirectory: true, isSymbolicLink: false, mode: 0o755, size: 0, mtime: new Date(0) };
// Models write `2>/dev/null` constantly: it reads as empty and swallows writes.
const DEV_NULL = "/dev/null";
const NULL_STAT = { isFile: true, isDirectory: false, isSymbolicLink: false, mode: 0o666, size: 0, mtime: new Date(0) };
const isNull = (path) => normalize(path) === DEV_NULL;
/** "/" or a mount itself (/work, /tmp): never removed or renamed. */
const isRootOrMount = (path) => normalize(path) === "/" || MOUNTS.some((m) => normalize(path) === `/${m}`);

export class WorkFs {
  /**
   * @param {any} FS Pyodide's Emscripten FS (untyped: its types come from @types/emscripten)
   * @param {(path: string) => string | undefined} resolve the jail: real path, or undefined outside
   * @param {Record<number, string>} errnoNames Emscripten errno number → name
   */
  constructor(FS, resolve, errnoNames) {
    this.FS = FS;
    this._resolve = resolve;
    this._errno = errnoNames;
    this.writeBudget = Infinity; // bytes the current command may still write to files
    this._resolved = new Map(); // path → real path, for one command line (see forget())
  }

  /** Forget resolved paths: at the start of each command line, and after python3 ran
   * (its code could have changed what a path leads to). Within one command the shell
   * itself cannot: it creates no links. */
  forget() {
    this._resolved.clear();
  }

  // -- helpers ---------------------------------------------------------------

  _real(path, syscall) {
    let real = this._resolved.get(path);
    if (real === undefined && path !== "/") {
      real = this._resolve(path) ?? null;
      this._resolved.set(path, real);
    }
    if (real === undefined || real === null) throw new FsError(path === "/" ? "EPERM" : "ENOENT", syscall, path);
    return real;
  }

  /** Run an FS call, turning Emscripten's ErrnoError into a Node-style error. */
  _call(syscall, path, fn) {
    try {
      return fn();
    } catch (err) {
      if (err instanceof FsError) throw err;
      if (err && typeof err.errno === "number") throw new FsError(this._errno[err.errno] || "EIO", syscall, path);
      throw err;
    }
  }

  _stat(path, syscall, follow) {
    if (path === "/") return { ...ROOT_STAT };
    if (isNull(path)) return { ...NULL_STAT };
    const real = this._real(path, syscall);
    const st = this._call(syscall, path, () => (follow ? this.FS.stat(real) : this.FS.lstat(real)));
    return {
      isFile: this.FS.isFile(st.mode),
      isDirectory: this.FS.isDir(st.mode),
      isSymbolicLink: this.FS.isLink(st.mode),
      mode: st.mode & 0o7777,
      size: st.size,
      mtime: new Date(st.mtime),
      // For git's index (shell/git/git-fs.mjs), which keeps them to see a file unchanged.
      ctime: new Date(st.ctime),
      ino: st.ino,
      dev: st.dev,
    };
  }

  _charge(bytes, path) {
    if (bytes > this.writeBudget) {
      throw new FsError("ENOSPC", "write", path, " (the shell's maxOutputBytes limit for one call)");
    }
    this.writeBudget -= bytes;
  }

  _encode(content, options) {
    if (typeof content !== "string") return content;
    const encoding = (typeof options === "string" ? options : options?.encoding) || "utf8";
    return encoding === "utf8" || encoding === "utf-8" ? new TextEncoder().encode(content) : Buffer.from(content, encoding);
  }

  _bytes(path, syscall = "open") {
    if (isNull(path)) return new Uint8Array(0);
    const real = this._real(path, syscall);
    return this._call(syscall, path, () => {
      if (this.FS.isDir(this.FS.stat(real).mode)) throw new FsError("EISDIR", "read", path);
      return this.FS.readFile(real);
    });
  }

  // -- reading -----------------------------------------------------------------

  async readFile(path, options) {
    const encoding = (typeof options === "string" ? options : options?.encoding) || "utf8";
    const bytes = this._bytes(path);
    return encoding === "utf8" || encoding === "utf-8" ? new TextDecoder().decode(bytes) : Buffer.from(bytes).toString(encoding);
  }

  /** @returns {Promise<ByteString>} */
  async readFileBytes(path) {
    return /** @type {ByteString} */ (/** @type {unknown} */ (Buffer.from(this._bytes(path)).toString("latin1")));
  }

  async readFileBuffer(path) {
    return this._bytes(path);
  }

  async exists(path) {
    try {
      this._stat(path, "access", true);
      return true;
    } catch {
      return false;
    }
  }

  async stat(path) {
    return this._stat(path, "stat", true);
  }

  async lstat(path) {
    return this._stat(path, "lstat", false);
  }

  async readdir(path) {
    return (await this.readdirWithFileTypes(path)).map((e) => e.name);
  }

  async readdirWithFileTypes(path) {
    if (path === "/") return MOUNTS.map((name) => ({ name, isFile: false, isDirectory: true, isSymbolicLink: false }));
    const real = this._real(path, "scandir");
    const names = this._call("scandir", path, () => {
      if (!this.FS.isDir(this.FS.stat(real).mode)) throw new FsError("ENOTDIR", "scandir", path);
      return this.FS.readdir(real).filter((n) => n !== "." && n !== "..");
    });
    return names.sort().map((name) => {
      const mode = this._call("lstat", path, () => this.FS.lstat(`${real}/${name}`).mode);
      return { name, isFile: this.FS.isFile(mode), isDirectory: this.FS.isDir(mode), isSymbolicLink: this.FS.isLink(mode) };
    });
  }

  async readlink(path) {
    const st = this._stat(path, "readlink", false);
    if (!st.isSymbolicLink) throw new FsError("EINVAL", "readlink", path);
    return this._call("readlink", path, () => this.FS.readlink(this._real(path, "readlink")));
  }

  async realpath(path) {
    this._stat(path, "realpath", true);
    return path === "/" ? "/" : normalize(path);
  }

  resolvePath(base, path) {
    return normalize(path.startsWith("/") ? path : `${base}/${path}`);
  }

  getAllPaths() {
    return []; // optional in IFileSystem; commands walk directories with readdir instead
  }

  // -- writing -----------------------------------------------------------------

  async writeFile(path, content, options) {
    this._write(path, this._encode(content, options), "w");
  }

  async appendFile(path, content, options) {
    this._write(path, this._encode(content, options), "a");
  }

  _write(path, data, flags) {
    if (isNull(path)) return;
    const real = this._real(path, "open");
    this._call("open", path, () => {
      if (this.FS.analyzePath(real).exists && this.FS.isDir(this.FS.stat(real).mode)) throw new FsError("EISDIR", "open", path);
      this._charge(data.length, path);
      const stream = this.FS.open(real, flags);
      try {
        this.FS.write(stream, data, 0, data.length);
      } finally {
        this.FS.close(stream);
      }
    });
  }

  async mkdir(path, options = {}) {
    if (path === "/") {
      if (options.recursive) return;
      throw new FsError("EEXIST", "mkdir", path);
    }
    const real = this._real(path, "mkdir");
    this._call("mkdir", path, () => {
      if (!options.recursive) return void this.FS.mkdir(real);
      const exists = this.FS.analyzePath(real);
      if (exists.exists) {
        if (!this.FS.isDir(this.FS.stat(real).mode)) throw new FsError("EEXIST", "mkdir", path);
        return;
      }
      this.FS.mkdirTree(real);
    });
  }

  async rm(path, options = {}) {
    if (isRootOrMount(path)) throw new FsError("EPERM", "rm", path);
    let real;
    try {
      real = this._real(path, "rm");
      this._call("rm", path, () => this.FS.lstat(real));
    } catch (err) {
      if (options.force && err.code === "ENOENT") return;
      throw err;
    }
    this._call("rm", path, () => this._remove(real, path, options.recursive));
  }

  /** An empty folder's removal (git's, shell/git/git-fs.mjs). */
  async rmdir(path) {
    if (isRootOrMount(path)) throw new FsError("EPERM", "rmdir", path);
    const real = this._real(path, "rmdir");
    this._call("rmdir", path, () => this.FS.rmdir(real));
  }

  _remove(real, path, recursive) {
    const { mode } = this.FS.lstat(real);
    if (!this.FS.isDir(mode)) return void this.FS.unlink(real);
    if (!recursive) throw new FsError("EISDIR", "rm", path);
    for (const name of this.FS.readdir(real)) {
      if (name !== "." && name !== "..") this._remove(`${real}/${name}`, `${path}/${name}`, true);
    }
    this.FS.rmdir(real);
  }

  async cp(src, dest, options = {}) {
    const from = this._real(src, "cp");
    const to = this._real(dest, "cp");
    this._call("cp", src, () => this._copy(from, to, src, options.recursive));
  }

  _copy(from, to, shown, recursive) {
    const st = this.FS.stat(from);
    if (!this.FS.isDir(st.mode)) {
      const data = this.FS.readFile(from);
      this._charge(data.length, shown);
      this.FS.writeFile(to, data);
      this.FS.chmod(to, st.mode & 0o7777);
      return;
    }
    if (!recursive) throw new FsError("EISDIR", "cp", shown, " (use -r)");
    if (`${to}/`.startsWith(`${from}/`)) throw new FsError("EINVAL", "cp", shown, " (cannot copy a directory into itself)");
    if (!this.FS.analyzePath(to).exists) this.FS.mkdir(to);
    for (const name of this.FS.readdir(from)) {
      if (name !== "." && name !== "..") this._copy(`${from}/${name}`, `${to}/${name}`, `${shown}/${name}`, true);
    }
  }

  async mv(src, dest) {
    const from = this._real(src, "rename");
    const to = this._real(dest, "rename");
    if (isRootOrMount(src)) throw new FsError("EPERM", "rename", src);
    this._call("rename", src, () => this.FS.rename(from, to));
  }

  async chmod(path, mode) {
    const real = this._real(path, "chmod");
    this._call("chmod", path, () => this.FS.chmod(real, mode));
  }

  async utimes(path, atime, mtime) {
    const real = this._real(path, "utime");
    this._call("utime", path, () => this.FS.utime(real, +atime, +mtime));
  }

  // EACCES rather than EPERM: just-bash's ln reads EPERM as "hard link to a directory".
  async symlink(_target, linkPath) {
    throw new FsError("EACCES", "symlink", linkPath, " (links cannot be created in this workspace)");
  }

  async link(_existing, newPath) {
    throw new FsError("EACCES", "link", newPath, " (links cannot be created in this workspace)");
  }
}

/** POSIX-normalise an absolute path ("/work/a/../b/" → "/work/b"). */
export function normalize(path) {
  const out = [];
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") out.pop();
    else out.push(part);
  }
  return `/${out.join("/")}`;
}
