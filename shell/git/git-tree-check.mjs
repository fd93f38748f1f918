// What a commit would write into /work, checked before anything is written: every name
// of its trees is a plain name (not "", ".", "..", ".git" in any case or with trailing
// dots or spaces, no "/", "\" or NUL), no symlink or submodule entry, no deeper than
// MAX_DEPTH folders. A checkout, reset --hard, restore, merge or stash apply of a tree
// that fails is refused whole (git's own verify_path refuses the same names). The
// sandbox's jail would stop a path out of /work anyway; this keeps a bad tree from
// leaving a checkout half done.
import git from "isomorphic-git";
import { GitError } from "./git-base.mjs";

const MAX_DEPTH = 200;

/** Why one tree entry's name is refused, or null. */
function badName(name) {
  if (name === "" || name === "." || name === "..") return "is not a file name";
  if (/[/\\\0]/.test(name)) return "holds a path separator or NUL";
  if (/^\.git[. ]*$/i.test(name)) return "is git's own folder";
  return null;
}

/**
 * Refuse the commit or tree `oid` if what it holds cannot be written as is.
 * @param {import("./git-base.mjs").Git} g
 */
export async function checkTree(g, oid) {
  const seen = new Set();
  const visit = async (treeOid, prefix, depth) => {
    if (depth > MAX_DEPTH) throw refused(prefix, `is more than ${MAX_DEPTH} folders deep`);
    if (seen.has(treeOid)) return; // the same tree again (a copy of a folder): checked once
    seen.add(treeOid);
    let tree;
    try {
      ({ tree } = await git.readTree({ ...g.repo, oid: treeOid }));
    } catch (err) {
      // isomorphic-git refuses some of these names itself, as it parses the tree.
      const e = /** @type {any} */ (err);
      if (e?.code === "UnsafeFilepathError") {
        const name = String(e.data?.filepath ?? "");
        throw refused(JSON.stringify(`${prefix}${name}`), badName(name) ?? "is not a file name");
      }
      throw err;
    }
    for (const entry of tree) {
      const shown = `${prefix}${entry.path}`;
      const why = badName(entry.path);
      if (why) throw refused(JSON.stringify(shown), why);
      if (entry.mode === "120000") throw refused(shown, "is a symbolic link, which this workspace cannot hold");
      if (entry.mode === "160000") throw refused(shown, "is a submodule, which this git does not support");
      if (entry.type === "tree") await visit(entry.oid, `${shown}/`, depth + 1);
    }
  };
  await visit(oid, "", 0);
}

const refused = (path, why) =>
  new GitError(`error: invalid path '${path}': it ${why}\nfatal: refusing to write this tree into the workspace (nothing was changed)\n`);
