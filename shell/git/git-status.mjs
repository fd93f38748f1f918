// `git status`: long, `--short` and `--porcelain`, from isomorphic-git's status
// matrix (HEAD, working tree, index) plus exact renames in the index.
import git from "isomorphic-git";
import { changes, quotePath } from "./git-diff.mjs";
import { parseArgs, unsupported } from "./git-base.mjs";

/** @typedef {{path: string, x: string, y: string, from?: string}} Entry */

/**
 * What differs: entries with git's two status letters (X: index against HEAD, Y:
 * working tree against index), and the untracked files (folders holding only untracked
 * files shown as one "dir/").
 * @param {import("./git-base.mjs").Git} g
 */
export async function statusOf(g, specs = ["."]) {
  // refresh: false: `git status` writes nothing, not even the index's file times (git
  // does; here every write is a change of the run's, journaled and checkpointed).
  const matrix = await git.statusMatrix({ ...g.repo, filepaths: specs, refresh: false });
  /** @type {Entry[]} */
  const entries = [];
  const untracked = [];
  const trackedDirs = new Set();
  for (const [path, h, w, s] of matrix) {
    if (h || s) {
      const parts = path.split("/");
      for (let i = 1; i < parts.length; i++) trackedDirs.add(parts.slice(0, i).join("/"));
    }
    if (s === 0) {
      if (h) entries.push({ path, x: "D", y: " " });
      if (w) untracked.push(path);
      continue;
    }
    const x = h === 0 ? "A" : s === 1 ? " " : "M";
    const y = w === 0 ? "D" : s === 2 ? " " : s === 1 ? (w === 1 ? " " : "M") : "M";
    if (x !== " " || y !== " ") entries.push({ path, x, y });
  }
  // Exact renames in the index: a staged deletion and a staged addition of one blob.
  const staged = entries.filter((e) => (e.x === "D" || e.x === "A") && e.y !== "?");
  if (staged.some((e) => e.x === "D") && staged.some((e) => e.x === "A")) {
    const head = await g.head();
    if (head) {
      const moved = (await changes(g, { kind: "tree", oid: head }, { kind: "index" }, specs[0] === "." ? [] : specs)).filter((c) => c.from);
      for (const c of moved) {
        const gone = entries.findIndex((e) => e.path === c.from && e.x === "D");
        const come = entries.find((e) => e.path === c.path && e.x === "A");
        if (gone >= 0 && come) {
          entries.splice(gone, 1);
          come.x = "R";
          come.from = c.from;
        }
      }
    }
  }
  if (await mergeHead(g)) {
    for (const path of await conflicted(g)) {
      const at = entries.findIndex((e) => e.path === path);
      if (at >= 0) entries.splice(at, 1);
      entries.push({ path, x: "U", y: "U" });
    }
  }
  const shownUntracked = new Set();
  for (const path of untracked) {
    const parts = path.split("/");
    let shown = path;
    for (let i = 1; i < parts.length; i++) {
      const dir = parts.slice(0, i).join("/");
      if (!trackedDirs.has(dir)) {
        shown = `${dir}/`;
        break;
      }
    }
    shownUntracked.add(shown);
  }
  entries.sort((a, b) => (a.path < b.path ? -1 : 1));
  return { entries, untracked: [...shownUntracked].sort() };
}

const LABELS = { A: "new file:   ", M: "modified:   ", D: "deleted:    ", R: "renamed:    " };

/** The long format, as `git status` and a refused `git commit` print it. */
export async function longStatus(g, st) {
  const branch = await g.branch();
  const head = await g.head();
  let out = branch ? `On branch ${branch}\n` : `HEAD detached at ${head?.slice(0, 7)}\n`;
  if (!head) out += "\nNo commits yet\n\n";
  const track = branch && head ? await tracking(g, branch, head) : null;
  if (track) {
    const { name, ahead, behind } = track;
    const commits = (n) => `${n} commit${n === 1 ? "" : "s"}`;
    if (track.gone)
      out += `Your branch is based on '${name}', but the upstream is gone.\n  (use "git branch --unset-upstream" to fixup)\n\n`;
    else if (!ahead && !behind) out += `Your branch is up to date with '${name}'.\n\n`;
    else if (ahead && !behind)
      out += `Your branch is ahead of '${name}' by ${commits(ahead)}.\n  (use "git push" to publish your local commits)\n\n`;
    else if (behind && !ahead)
      out += `Your branch is behind '${name}' by ${commits(behind)}, and can be fast-forwarded.\n  (use "git pull" to update your local branch)\n\n`;
    else
      out += `Your branch and '${name}' have diverged,\nand have ${ahead} and ${behind} different commits each, respectively.\n  (use "git pull" to merge the remote branch into yours)\n\n`;
  }
  const merging = await mergeHead(g);
  const unmerged = st.entries.filter((e) => e.x === "U");
  if (merging && unmerged.length === 0) out += 'All conflicts fixed but you are still merging.\n  (use "git commit" to conclude merge)\n\n';
  if (merging && unmerged.length > 0)
    out += 'You have unmerged paths.\n  (fix conflicts and run "git commit")\n  (use "git merge --abort" to abort the merge)\n\n';
  const name = (e) => (e.from ? `${quotePath(g.shown(e.from))} -> ${quotePath(g.shown(e.path))}` : quotePath(g.shown(e.path)));
  const staged = st.entries.filter((e) => e.x !== " " && e.x !== "U");
  const unstaged = st.entries.filter((e) => e.y !== " " && e.x !== "U");
  if (staged.length > 0) {
    out += `Changes to be committed:\n  (use "git ${head ? "restore --staged" : "rm --cached"} <file>..." to unstage)\n`;
    for (const e of staged) out += `\t${LABELS[e.x]}${name(e)}\n`;
    out += "\n";
  }
  if (unmerged.length > 0) {
    out += 'Unmerged paths:\n  (use "git add <file>..." to mark resolution)\n';
    for (const e of unmerged) out += `\tboth modified:   ${quotePath(g.shown(e.path))}\n`;
    out += "\n";
  }
  if (unstaged.length > 0) {
    const removes = unstaged.some((e) => e.y === "D");
    out += `Changes not staged for commit:\n  (use "git ${removes ? "add/rm" : "add"} <file>..." to update what will be committed)\n`;
    out += '  (use "git restore <file>..." to discard changes in working directory)\n';
    for (const e of unstaged) out += `\t${LABELS[e.y]}${quotePath(g.shown(e.path))}\n`;
    out += "\n";
  }
  if (st.untracked.length > 0) {
    out += 'Untracked files:\n  (use "git add <file>..." to include in what will be committed)\n';
    for (const path of st.untracked) out += `\t${quotePath(g.shown(path))}\n`;
    out += "\n";
  }
  if (staged.length > 0) return out;
  if (unstaged.length > 0 || unmerged.length > 0) return `${out}no changes added to commit (use "git add" and/or "git commit -a")\n`;
  if (st.untracked.length > 0) return `${out}nothing added to commit but untracked files present (use "git add" to track)\n`;
  if (!head) return `${out}nothing to commit (create/copy files and use "git add" to track)\n`;
  return `${out}nothing to commit, working tree clean\n`;
}

/** The branch's upstream (branch.NAME.remote and .merge in the config) and how far
 * apart they are, or null when it has none. */
async function tracking(g, branch, head) {
  const remote = await git.getConfig({ ...g.repo, path: `branch.${branch}.remote` });
  const merge = await git.getConfig({ ...g.repo, path: `branch.${branch}.merge` });
  if (!remote || !merge || !String(merge).startsWith("refs/heads/")) return null;
  const short = String(merge).slice("refs/heads/".length);
  const name = remote === "." ? short : `${remote}/${short}`;
  const ref = remote === "." ? merge : `refs/remotes/${remote}/${short}`;
  const upstream = await git.resolveRef({ ...g.repo, ref }).catch(() => null);
  if (!upstream) return { name, ahead: 0, behind: 0, gone: true };
  const reach = async (oid) => {
    const seen = new Set();
    const todo = [oid];
    while (todo.length > 0) {
      const next = /** @type {string} */ (todo.pop());
      if (seen.has(next)) continue;
      seen.add(next);
      todo.push(...(await git.readCommit({ ...g.repo, oid: next })).commit.parent);
    }
    return seen;
  };
  const [mine, theirs] = await Promise.all([reach(head), reach(upstream)]);
  return {
    name,
    ahead: [...mine].filter((o) => !theirs.has(o)).length,
    behind: [...theirs].filter((o) => !mine.has(o)).length,
    gone: false,
  };
}

/** Paths with more than one stage in the index (a merge's conflicts), read from the
 * index file itself (version 2 or 3: isomorphic-git keeps the stages but does not tell
 * them). */
export async function conflicted(g) {
  const bytes = await g.fs.readFile(`${g.gitdir}/index`).catch(() => null);
  if (!bytes || bytes.length < 12) return [];
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const version = view.getUint32(4);
  if (version !== 2 && version !== 3) return [];
  const out = new Set();
  let at = 12;
  for (let i = view.getUint32(8); i > 0 && at + 62 <= bytes.length; i--) {
    const flags = view.getUint16(at + 60);
    const extended = version === 3 && flags & 0x4000 ? 2 : 0;
    const start = at + 62 + extended;
    let end = start + (flags & 0xfff);
    if ((flags & 0xfff) === 0xfff) end = bytes.indexOf(0, start);
    if ((flags >> 12) & 3) out.add(new TextDecoder().decode(bytes.subarray(start, end)));
    at += Math.ceil((end - at + 1) / 8) * 8;
  }
  return [...out];
}

/** The commit a merge that stopped on a conflict waits to join (.git/MERGE_HEAD). */
export async function mergeHead(g) {
  try {
    return (await g.fs.readFile(`${g.gitdir}/MERGE_HEAD`, "utf8")).trim() || null;
  } catch {
    return null;
  }
}

const STATUS_FLAGS = {
  s: "short",
  short: "short",
  porcelain: "porcelain",
  "porcelain=v1": "porcelain",
  b: "branch",
  branch: "branch",
  "untracked-files=": "untracked",
  u: "untracked=",
  "no-renames": "noRenames",
  "ignore-submodules": "ignoreSubmodules",
};

export async function status(g, args) {
  const norm = args.map((a) => (a === "--porcelain=v1" ? "--porcelain" : a));
  const { flags, rest, paths } = parseArgs("status", norm, STATUS_FLAGS);
  if (flags.untracked !== undefined && flags.untracked !== "normal") throw unsupported(`status -u${flags.untracked}`);
  const specs = [...rest, ...(paths ?? [])].map((p) => g.inRepo(p) || ".");
  const st = await statusOf(g, specs.length ? specs : ["."]);
  if (!flags.short && !flags.porcelain) return g.print(await longStatus(g, st));
  const shown = flags.porcelain ? (p) => quotePath(p) : (p) => quotePath(g.shown(p));
  let out = "";
  if (flags.branch) {
    const branch = await g.branch();
    const head = await g.head();
    const track = branch && head ? await tracking(g, branch, head) : null;
    const apart =
      track && !track.gone
        ? [track.ahead && `ahead ${track.ahead}`, track.behind && `behind ${track.behind}`].filter(Boolean).join(", ")
        : "";
    const upstream = track ? `...${track.name}${track.gone ? " [gone]" : apart ? ` [${apart}]` : ""}` : "";
    out += branch ? (head ? `## ${branch}${upstream}\n` : `## No commits yet on ${branch}\n`) : "## HEAD (no branch)\n";
  }
  for (const e of st.entries) out += `${e.x}${e.y} ${e.from ? `${shown(e.from)} -> ` : ""}${shown(e.path)}\n`;
  for (const path of st.untracked) out += `?? ${shown(path)}\n`;
  g.print(out);
}
