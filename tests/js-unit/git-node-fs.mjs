// The shell's WorkFs interface (shell/fs-adapter.mjs) over Node's filesystem, for the
// git tests: the same GitFs and git code the sandbox runs, over a real folder that the
// host's own git can then read. (The sandbox's WorkFs needs Pyodide's FS; the e2e
// rows run git over that one.)
import fs from "node:fs/promises";
import { GitFs } from "../../shell/git/git-fs.mjs";

const shape = (st) => ({
  isFile: st.isFile(),
  isDirectory: st.isDirectory(),
  isSymbolicLink: st.isSymbolicLink(),
  mode: st.mode & 0o7777,
  size: st.size,
  mtime: st.mtime,
  ctime: st.ctime,
  ino: st.ino,
  dev: st.dev,
});

class NodeWork {
  async readFile(path, encoding = "utf8") {
    return fs.readFile(path, encoding);
  }
  async readFileBuffer(path) {
    return new Uint8Array(await fs.readFile(path));
  }
  async writeFile(path, data, encoding) {
    await fs.writeFile(path, data, encoding ?? undefined);
  }
  async chmod(path, mode) {
    await fs.chmod(path, mode);
  }
  async mkdir(path, options = {}) {
    await fs.mkdir(path, options);
  }
  async rmdir(path) {
    await fs.rmdir(path);
  }
  async rm(path, options = {}) {
    await fs.rm(path, options);
  }
  async stat(path) {
    return shape(await fs.stat(path));
  }
  async lstat(path) {
    return shape(await fs.lstat(path));
  }
  async readdir(path) {
    return (await fs.readdir(path)).sort();
  }
  async readlink(path) {
    return fs.readlink(path);
  }
  async symlink(_target, path) {
    throw Object.assign(new Error(`EACCES: permission denied, symlink '${path}'`), { code: "EACCES" });
  }
  async mv(from, to) {
    await fs.rename(from, to);
  }
}

export const nodeGitFs = () => new GitFs(/** @type {any} */ (new NodeWork()));
