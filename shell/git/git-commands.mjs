// The git subcommands that change the index and the working tree: init, add, rm, mv,
// commit, restore, reset. Each is isomorphic-git underneath and prints what git prints.
// (Branches and merges: git-branches.mjs; stash, tags, config, remotes: git-refs.mjs.)
import git from "isomorphic-git";
import { GitError, cleanMessage, fatal, formatDate, identityPart, matches, parseArgs, short, subject, unsupported } from "./git-base.mjs";
import { changes, counts, modeLines, summary } from "./git-diff.mjs";
import { conflicted, longStatus, mergeHead, statusOf } from "./git-status.mjs";
import { checkTree } from "./git-tree-check.mjs";

/** `git init [-b NAME] [-q] [DIR]` (the only command that runs outside a repository). */
export async function init(fs, _cwd, args, dirOf) {
  const { flags, rest } = parseArgs("init", args, { b: "branch=", "initial-branch": "branch=", q: "quiet", quiet: "quiet" });
  const dir = dirOf(rest[0] ?? ".");
  let existed = false;
  try {
    existed = (await fs.stat(`${dir}/.git`)).isDirectory();
  } catch {}
  if (!existed) {
    await fs.mkdir(dir).catch(() => {});
    await git.init({ fs, dir, defaultBranch: flags.branch ?? "main" });
  }
  if (flags.quiet) return "";
  return `${existed ? "Reinitialized existing" : "Initialized empty"} Git repository in ${dir}/.git/\n`;
}

/** Stage what the pathspecs cover: new and changed files added, gone files removed
 * (`all`: untracked files too; otherwise only tracked ones). */
async function stage(g, specs, { all = true } = {}) {
  const matrix = await git.statusMatrix({ ...g.repo, filepaths: specs.length ? specs : ["."] });
  const adds = [];
  for (const [path, h, w, s] of matrix) {
    if (w === 0 && s !== 0) await git.remove({ ...g.repo, filepath: path });
    else if (w !== 0 && (s === 0 ? all : s === 3 || (s === 1 && w === 2) || (h === 0 && s !== 2))) adds.push(path);
  }
  if (adds.length > 0) await git.add({ ...g.repo, filepath: adds });
  return matrix;
}

export async function add(g, args) {
  const { flags, rest, paths } = parseArgs("add", args, {
    A: "all",
    all: "all",
    u: "update",
    update: "update",
    f: "force",
    force: "force",
    v: "verbose",
    verbose: "verbose",
    n: "dryRun",
    "dry-run": "dryRun",
    p: "patch",
    patch: "patch",
    i: "interactive",
    interactive: "interactive",
    N: "intent",
  });
  if (flags.patch || flags.interactive) throw unsupported(`add ${flags.patch ? "-p" : "-i"}`);
  if (flags.dryRun || flags.intent) throw unsupported(`add ${flags.dryRun ? "--dry-run" : "-N"}`);
  const specs = [...rest, ...(paths ?? [])].map((p) => g.inRepo(p) || ".");
  if (specs.length === 0 && !flags.all && !flags.update) {
    g.warn("Nothing specified, nothing added.\nhint: Maybe you wanted to say 'git add .'?\n");
    return;
  }
  let indexed = null; // the index's paths, read once if a pathspec names no file
  for (const spec of specs) {
    if (spec === ".") continue;
    const exists = await g.fs.lstat(`${g.dir}/${spec}`).then(
      () => true,
      () => false,
    );
    if (exists) continue;
    indexed ??= await git.listFiles(g.repo);
    if (!indexed.some((f) => matches(f, [spec])))
      throw fatal(`pathspec '${rest.includes(spec) ? spec : g.shown(spec)}' did not match any files`);
  }
  if (flags.force) {
    await git.add({ ...g.repo, filepath: specs.length ? specs : ["."], force: true });
    return;
  }
  const matrix = await stage(g, specs, { all: !flags.update });
  if (flags.verbose) for (const [path] of matrix) g.print(`add '${path}'\n`);
}

export async function rm(g, args) {
  const { flags, rest, paths } = parseArgs("rm", args, {
    cached: "cached",
    r: "recursive",
    f: "force",
    force: "force",
    q: "quiet",
    quiet: "quiet",
    "ignore-unmatch": "ignoreUnmatch",
  });
  const specs = [...rest, ...(paths ?? [])].map((p) => g.inRepo(p));
  if (specs.length === 0) throw new GitError("usage: git rm [<options>] [--] <file>...\n", 129);
  const tracked = await git.listFiles(g.repo);
  const chosen = [];
  for (const spec of specs) {
    const hit = tracked.filter((f) => matches(f, [spec]));
    if (hit.length === 0) {
      if (flags.ignoreUnmatch) continue;
      throw fatal(`pathspec '${g.shown(spec)}' did not match any files`);
    }
    if (!hit.includes(spec) && !flags.recursive) throw fatal(`not removing '${g.shown(spec)}' recursively without -r`);
    chosen.push(...hit);
  }
  if (!flags.force) {
    const dirty = [];
    for (const [path, h, w, s] of await git.statusMatrix({ ...g.repo, filepaths: chosen, refresh: false })) {
      const stagedChange = h === 0 || s === 2 || s === 3;
      const local = w !== 0 && (s === 3 || (s === 1 && w === 2));
      if (flags.cached ? stagedChange && local : local || (stagedChange && h !== 0)) dirty.push(path);
    }
    if (dirty.length > 0) {
      const what = flags.cached ? "staged content different from both the\nfile and the HEAD" : "local modifications";
      throw new GitError(
        `error: the following ${dirty.length === 1 ? "file has" : "files have"} ${what}:\n${dirty.map((p) => `    ${g.shown(p)}\n`).join("")}(use --cached to keep the file, or -f to force removal)\n`,
        1,
      );
    }
  }
  for (const path of [...new Set(chosen)]) {
    await git.remove({ ...g.repo, filepath: path });
    if (!flags.cached) await g.fs.unlink(`${g.dir}/${path}`).catch(() => {});
    if (!flags.quiet) g.print(`rm '${path}'\n`);
  }
}

export async function mv(g, args) {
  const { flags, rest } = parseArgs("mv", args, { f: "force", force: "force", v: "verbose", n: "dryRun", k: "skip" });
  if (flags.dryRun || flags.skip) throw unsupported(`mv ${flags.dryRun ? "-n" : "-k"}`);
  if (rest.length !== 2) throw unsupported("mv of more than one source");
  const [from, to] = rest.map((p) => g.inRepo(p));
  const tracked = (await git.listFiles(g.repo)).filter((f) => matches(f, [from]));
  if (tracked.length === 0) throw fatal(`not under version control, source=${g.shown(from)}, destination=${g.shown(to)}`);
  let target = to;
  const st = await g.fs.stat(`${g.dir}/${to}`).catch(() => null);
  if (st?.isDirectory()) target = `${to}/${from.split("/").pop()}`;
  else if (st && !flags.force) throw fatal(`destination exists, source=${g.shown(from)}, destination=${g.shown(to)}`);
  await g.fs.work.mv(`${g.dir}/${from}`, `${g.dir}/${target}`);
  for (const path of tracked) {
    await git.remove({ ...g.repo, filepath: path });
    await git.add({ ...g.repo, filepath: target + path.slice(from.length) });
  }
}

const COMMIT_FLAGS = {
  m: "message*",
  message: "message*",
  a: "all",
  all: "all",
  amend: "amend",
  "no-edit": "noEdit",
  q: "quiet",
  quiet: "quiet",
  "allow-empty": "allowEmpty",
  "allow-empty-message": "allowEmptyMessage",
  F: "file=",
  file: "file=",
  author: "author=",
  s: "signoff",
  signoff: "signoff",
  v: "verbose",
  "no-verify": "noVerify",
  n: "noVerify",
  S: "sign",
  "gpg-sign": "sign",
  e: "edit",
  edit: "edit",
  p: "patch",
  i: "include",
  o: "only",
};

export async function commit(g, args) {
  const { flags, rest, paths } = parseArgs("commit", args, COMMIT_FLAGS);
  if (flags.sign || flags.patch || flags.include || flags.only || flags.edit)
    throw unsupported(`commit ${flags.sign ? "-S" : flags.patch ? "-p" : flags.include ? "-i" : flags.only ? "-o" : "-e"}`);
  if (rest.length || paths?.length) throw unsupported("commit <paths> (stage them with git add, then commit)");
  let message;
  if (flags.file === "-") message = g.stdin;
  else if (flags.file !== undefined)
    message = await g.fs.readFile(flags.file.startsWith("/") ? flags.file : `${g.cwd}/${flags.file}`, "utf8");
  else if (flags.message) message = flags.message.join("\n\n");
  const head = await g.head();
  const merging = await mergeHead(g);
  if (flags.amend && !head) throw fatal("You have nothing to amend.");
  if (message === undefined && !flags.amend) {
    if (!merging)
      throw new GitError('git: commit without -m is not supported here (there is no editor): use git commit -m "message"\n', 129);
    message = await g.fs.readFile(`${g.gitdir}/MERGE_MSG`, "utf8").catch(() => `Merge commit '${merging}'\n`);
  }
  if (message?.includes("\0")) throw new GitError("error: a NUL byte in commit log message not allowed.\n", 1);
  if (flags.all) await stage(g, [], { all: false });
  const unmerged = await conflicted(g);
  if (unmerged.length > 0) {
    throw new GitError(
      `error: Committing is not possible because you have unmerged files.\nhint: Fix them up in the work tree, and then use 'git add/rm <file>'\nhint: as appropriate to mark resolution and make a commit.\nfatal: Exiting because of an unresolved conflict.\n`,
      128,
    );
  }
  const before = head ? { kind: "tree", oid: head } : { kind: "none" };
  const staged = await changes(g, /** @type {any} */ (before), { kind: "index" });
  if (staged.length === 0 && !flags.allowEmpty && !flags.amend && !merging) {
    if (!flags.quiet) g.print(await longStatus(g, await statusOf(g)));
    throw new GitError("", 1);
  }
  let text;
  if (message !== undefined) {
    text = cleanMessage(message);
    if (flags.signoff) {
      const me = await g.person("COMMITTER");
      text = `${text.replace(/\n$/, "")}\n\nSigned-off-by: ${me.name} <${me.email}>\n`;
    }
    if (!text && !flags.allowEmptyMessage) throw new GitError("Aborting commit due to empty commit message.\n", 1);
  }
  let author = await g.person("AUTHOR");
  if (flags.author) {
    const m = /^(.*?)\s*<(.*)>$/.exec(flags.author);
    if (!m) throw fatal(`--author '${flags.author}' is not 'Name <email>'`);
    author = { ...author, name: identityPart(m[1]), email: identityPart(m[2]) };
  }
  const committer = await g.person("COMMITTER");
  const previous = flags.amend && head ? await g.commit(head) : null;
  if (previous && !flags.author && !g.env.GIT_AUTHOR_DATE)
    author = { ...previous.author, ...(g.env.GIT_AUTHOR_NAME ? { name: author.name } : {}) };
  const parent = previous ? previous.parent : head ? (merging ? [head, merging] : [head]) : [];
  const oid = await git.commit({
    ...g.repo,
    message: text ?? previous?.message ?? "",
    author,
    committer,
    parent,
  });
  if (merging) {
    for (const name of ["MERGE_HEAD", "MERGE_MSG", "MERGE_MODE"]) await g.fs.unlink(`${g.gitdir}/${name}`).catch(() => {});
  }
  if (flags.quiet) return;
  const branch = await g.branch();
  const first = parent.length === 0 ? " (root-commit)" : "";
  const made = await g.commit(oid);
  const base = made.parent[0];
  const list = await changes(g, base ? { kind: "tree", oid: base } : { kind: "none" }, { kind: "tree", oid });
  g.print(`[${branch ?? "detached HEAD"}${first} ${short(oid)}] ${subject(made.message)}\n`);
  if (made.author.name !== made.committer.name || made.author.email !== made.committer.email)
    g.print(` Author: ${made.author.name} <${made.author.email}>\n`);
  if (previous) g.print(` Date: ${formatDate(made.author)}\n`);
  if (made.parent.length < 2 && list.length > 0) g.print(summary(await counts(list)) + modeLines(list));
}

/** Files back from the index (worktree) or a commit (`source`), into the index
 * (`staged`) and/or the working tree (`worktree`). */
/** A path's index entry back to what commit `ref` has, or out of the index where `ref`
 * is null or does not have it. */
async function unstage(g, path, ref) {
  if (!ref) return void (await git.remove({ ...g.repo, filepath: path }));
  await git.resetIndex({ ...g.repo, filepath: path, ref }).catch(() => git.remove({ ...g.repo, filepath: path }));
}

export async function restoreFiles(g, pathArgs, { source, staged, worktree }) {
  const specs = pathArgs.map((p) => g.inRepo(p));
  if (specs.length === 0) throw fatal("you must specify path(s) to restore");
  const from = source ? await g.resolve(source) : null;
  if (from) await checkTree(g, from);
  const index = new Map();
  await git.walk({
    ...g.repo,
    trees: [from ? git.TREE({ ref: from }) : git.STAGE()],
    map: async (path, [entry]) => {
      if (path === ".") return true;
      const type = await entry?.type();
      if (type === "tree") return true;
      if (type === "blob" && matches(path, specs)) index.set(path, { oid: await entry?.oid(), mode: await entry?.mode() });
      return null;
    },
  });
  for (const spec of specs) {
    if (![...index.keys()].some((p) => matches(p, [spec])) && !(staged && !from)) {
      throw new GitError(`error: pathspec '${g.shown(spec)}' did not match any file(s) known to git\n`, 1);
    }
  }
  if (staged) {
    const ref = from ?? (await g.head());
    const tracked = (await git.listFiles(g.repo)).filter((f) => matches(f, specs));
    for (const path of new Set([...tracked, ...index.keys()])) await unstage(g, path, ref);
  }
  if (worktree) {
    for (const [path, { oid, mode }] of index) {
      const { blob } = await git.readBlob({ ...g.repo, oid });
      const full = `${g.dir}/${path}`;
      await mkdirs(g, full);
      await g.fs.writeFile(full, blob, { mode: mode === 0o100755 ? 0o755 : 0o644 });
    }
    if (from) await stage(g, [...index.keys()], { all: true }).then(() => {});
  }
}

async function mkdirs(g, file) {
  const parts = file.split("/").slice(1, -1);
  let at = "";
  for (const part of parts) {
    at += `/${part}`;
    await g.fs.mkdir(at).catch(() => {});
  }
}

export async function restore(g, args) {
  const { flags, rest, paths } = parseArgs("restore", args, {
    S: "staged",
    staged: "staged",
    W: "worktree",
    worktree: "worktree",
    s: "source=",
    source: "source=",
    p: "patch",
    q: "quiet",
  });
  if (flags.patch) throw unsupported("restore -p");
  const staged = Boolean(flags.staged);
  const worktree = flags.worktree || !staged;
  const source = flags.source ?? (staged ? "HEAD" : null);
  if (staged && !worktree) {
    const specs = [...rest, ...(paths ?? [])].map((p) => g.inRepo(p));
    const ref = source && (await g.head()) ? await g.resolve(source) : null;
    for (const path of (await git.listFiles(g.repo)).filter((f) => matches(f, specs))) await unstage(g, path, ref);
    return;
  }
  return restoreFiles(g, [...rest, ...(paths ?? [])], { source, staged, worktree });
}

export async function reset(g, args) {
  const { flags, rest, paths } = parseArgs("reset", args, {
    soft: "soft",
    mixed: "mixed",
    hard: "hard",
    q: "quiet",
    quiet: "quiet",
    merge: "merge",
    keep: "keep",
    p: "patch",
  });
  if (flags.merge || flags.keep || flags.patch) throw unsupported(`reset --${flags.merge ? "merge" : flags.keep ? "keep" : "patch"}`);
  const head = await g.head();
  const isRev = rest.length > 0 && (await g.isRevision(rest[0]));
  const target = isRev ? rest[0] : "HEAD";
  const pathArgs = [...(isRev ? rest.slice(1) : rest), ...(paths ?? [])];
  if (pathArgs.length > 0) {
    if (flags.soft || flags.hard) throw fatal(`Cannot do ${flags.soft ? "soft" : "hard"} reset with paths.`);
    const oid = head ? await g.resolve(target) : null;
    const specs = pathArgs.map((p) => g.inRepo(p));
    for (const path of (await git.listFiles(g.repo)).filter((f) => matches(f, specs))) {
      await unstage(g, path, oid);
    }
    return unstagedAfter(g, flags);
  }
  if (!head) {
    if (target !== "HEAD") await g.resolve(target);
    for (const path of await git.listFiles(g.repo)) await git.remove({ ...g.repo, filepath: path });
    return;
  }
  const oid = await g.resolve(target);
  if (flags.hard) await checkTree(g, oid);
  const branch = await g.branch();
  await git.writeRef({ ...g.repo, ref: branch ? `refs/heads/${branch}` : "HEAD", value: oid, force: true });
  for (const name of ["MERGE_HEAD", "MERGE_MSG", "MERGE_MODE"]) await g.fs.unlink(`${g.gitdir}/${name}`).catch(() => {});
  if (flags.soft) return;
  if (flags.hard) {
    // Files tracked before and gone from the commit go; the rest become the commit's.
    const before = await git.listFiles(g.repo);
    await git.checkout({ ...g.repo, ref: oid, noUpdateHead: true, force: true });
    const now = new Set(await git.listFiles(g.repo));
    for (const path of before) if (!now.has(path)) await g.fs.unlink(`${g.dir}/${path}`).catch(() => {});
    if (!flags.quiet) g.print(`HEAD is now at ${short(oid)} ${subject((await g.commit(oid)).message)}\n`);
    return;
  }
  const tree = new Set();
  await git.walk({
    ...g.repo,
    trees: [git.TREE({ ref: oid })],
    map: async (path, [entry]) => {
      if ((await entry?.type()) === "blob") tree.add(path);
      return true;
    },
  });
  for (const path of new Set([...(await git.listFiles(g.repo)), ...tree])) {
    if (tree.has(path)) await git.resetIndex({ ...g.repo, filepath: path, ref: oid });
    else await git.remove({ ...g.repo, filepath: path });
  }
  await unstagedAfter(g, flags);
}

async function unstagedAfter(g, flags) {
  if (flags.quiet) return;
  const st = await statusOf(g);
  const lines = st.entries.filter((e) => e.y !== " ").map((e) => `${e.y}\t${e.path}\n`);
  if (lines.length > 0) g.print(`Unstaged changes after reset:\n${lines.join("")}`);
}
