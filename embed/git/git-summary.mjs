// h.git(): where /work's repository stands (its branch, and what `git status` would list),
// read on the page with isomorphic-git over h.fs, read only: nothing is written, not
// even the index's refreshed times, so asking changes no file and no checkpoint. Bundled
// apart (dist/git-summary.mjs) and loaded only when a page asks; the widget's files
// panel shows it in its header.
import git from "isomorphic-git";
import { nodeStats } from "../../shell/git/git-fs.mjs";

const DIR = "/work";

/** isomorphic-git's filesystem over h.fs, refusing every write. */
function readOnly(fs) {
  const refused = async (path) => {
    throw Object.assign(new Error(`EROFS: h.git() writes nothing, '${path}'`), { code: "EROFS" });
  };
  const stats = (st) =>
    nodeStats({
      type: st.type === "dir" || st.type === "symlink" ? st.type : "file",
      mode: st.mode,
      size: st.size,
      mtimeMs: st.mtime,
      ctimeMs: st.mtime,
    });
  return {
    promises: {
      readFile: (path, options) => fs.readFile(path, (typeof options === "string" ? options : options?.encoding) ?? undefined),
      stat: async (path) => stats(await fs.stat(path)),
      lstat: async (path) => stats(await fs.stat(path)),
      readdir: async (path) => (await fs.readdir(path)).map((e) => e.name),
      readlink: refused,
      writeFile: refused,
      mkdir: refused,
      rmdir: refused,
      unlink: refused,
      symlink: refused,
      rm: refused,
    },
  };
}

/**
 * The repository at /work, or null when /work is not one.
 * @param {import("../page/pyharness.d.ts").HarnessFs} fs
 * @returns {Promise<{branch: string | null, head: string | null, changes: number} | null>}
 */
export async function gitSummary(fs) {
  try {
    if ((await fs.stat(".git/HEAD")).type !== "file") return null;
  } catch {
    return null;
  }
  const repo = { fs: readOnly(fs), dir: DIR, cache: {} };
  const branch = (await git.currentBranch({ ...repo, fullname: false })) || null;
  const head = await git.resolveRef({ ...repo, ref: "HEAD" }).catch(() => null);
  // What `git status --short` lists: staged, unstaged and untracked files (not ignored).
  const matrix = await git.statusMatrix({ ...repo, refresh: false });
  const changes = matrix.filter(([, h, w, s]) => !(h === 1 && w === 1 && s === 1)).length;
  return { branch, head: head ? head.slice(0, 7) : null, changes };
}
