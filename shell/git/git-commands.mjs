// The git subcommands that change a repository: init, add, rm, mv, commit, branch,
// checkout/switch, merge, reset, restore, stash, tag, config, remote. Each is
// isomorphic-git underneath and prints what git prints.
import git from "isomorphic-git";
import {
  GitError,
  IniConfig,
  cleanMessage,
  fatal,
  formatDate,
  globalConfig,
  matches,
  parseArgs,
  short,
  subject,
  unsupported,
} from "./git-base.mjs";
import { changes, counts, modeLines, statText, summary } from "./git-diff.mjs";
import { conflicted, longStatus, mergeHead, statusOf } from "./git-status.mjs";
import { checkTree } from "./git-tree-check.mjs";

/** @typedef {import("./git-base.mjs").Git} Git */

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
  for (const spec of specs) {
    if (spec === ".") continue;
    const exists = await g.fs.lstat(`${g.dir}/${spec}`).then(
      () => true,
      () => false,
    );
    const tracked = exists || (await git.listFiles({ ...g.repo })).some((f) => matches(f, [spec]));
    if (!tracked) throw fatal(`pathspec '${rest.includes(spec) ? spec : g.shown(spec)}' did not match any files`);
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
    for (const [path, h, w, s] of await git.statusMatrix({ ...g.repo, filepaths: chosen })) {
      const stagedChange = h === 0 || s === 3 || s === 2 ? h === 0 || s !== 1 : false;
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
    author = { ...author, name: m[1], email: m[2] };
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

export async function branch(g, args) {
  const { flags, rest } = parseArgs("branch", args, {
    d: "delete",
    delete: "delete",
    D: "forceDelete",
    m: "move",
    move: "move",
    M: "move",
    f: "force",
    force: "force",
    a: "all",
    all: "all",
    l: "list",
    list: "list",
    v: "verbose",
    verbose: "verbose",
    "show-current": "current",
    c: "copy",
    copy: "copy",
    "no-color": "noColor",
  });
  const current = await g.branch();
  if (flags.current) return g.print(current ? `${current}\n` : "");
  if (flags.copy) throw unsupported("branch -c");
  if (flags.delete || flags.forceDelete) {
    if (rest.length === 0) throw fatal("branch name required");
    for (const name of rest) {
      if (name === current) throw new GitError(`error: Cannot delete branch '${name}' checked out at '${g.dir}'\n`, 1);
      let oid;
      try {
        oid = await git.resolveRef({ ...g.repo, ref: `refs/heads/${name}` });
      } catch {
        throw new GitError(`error: branch '${name}' not found.\n`, 1);
      }
      const head = await g.head();
      if (!flags.forceDelete && head && oid !== head && !(await git.isDescendent({ ...g.repo, oid: head, ancestor: oid }))) {
        throw new GitError(
          `error: The branch '${name}' is not fully merged.\nIf you are sure you want to delete it, run 'git branch -D ${name}'.\n`,
          1,
        );
      }
      await git.deleteBranch({ ...g.repo, ref: name });
      g.print(`Deleted branch ${name} (was ${short(oid)}).\n`);
    }
    return;
  }
  if (flags.move) {
    const [from, to] = rest.length === 1 ? [current, rest[0]] : rest;
    if (!from || !to) throw fatal("branch name required");
    await git.renameBranch({ ...g.repo, oldref: from, ref: to, checkout: from === current });
    return;
  }
  if (rest.length > 0 && !flags.list) {
    const [name, start] = rest;
    const head = await g.head();
    if (!head && !start) throw fatal(`not a valid object name: '${current ?? "HEAD"}'`);
    const oid = start ? await g.resolve(start) : head;
    const exists = await git.resolveRef({ ...g.repo, ref: `refs/heads/${name}` }).then(
      () => true,
      () => false,
    );
    if (exists && !flags.force) throw fatal(`a branch named '${name}' already exists`);
    if (/[\s~^:?*[\\]|\.\.|^-|\/$|\.lock$|@\{/.test(name)) throw fatal(`'${name}' is not a valid branch name`);
    await git.writeRef({ ...g.repo, ref: `refs/heads/${name}`, value: /** @type {string} */ (oid), force: true });
    return;
  }
  const names = (await git.listBranches(g.repo)).sort();
  const lines = [];
  const head = await g.head();
  if (!current && head) lines.push(`* (HEAD detached at ${short(head)})`);
  for (const name of names) {
    const mark = name === current ? "* " : "  ";
    if (!flags.verbose) lines.push(`${mark}${name}`);
    else {
      const oid = await git.resolveRef({ ...g.repo, ref: `refs/heads/${name}` });
      lines.push({ mark, name, oid, subject: subject((await g.commit(oid)).message) });
    }
  }
  if (flags.all) for (const name of await remoteBranches(g)) lines.push(`  remotes/${name}`);
  const width = Math.max(0, ...lines.map((l) => (typeof l === "string" ? 0 : l.name.length)));
  g.print(
    lines.map((l) => (typeof l === "string" ? `${l}\n` : `${l.mark}${l.name.padEnd(width)} ${short(l.oid)} ${l.subject}\n`)).join(""),
  );
}

async function remoteBranches(g) {
  const out = [];
  for (const remote of await git.listRemotes(g.repo)) {
    for (const name of await git.listBranches({ ...g.repo, remote: remote.remote })) out.push(`${remote.remote}/${name}`);
  }
  return out.sort();
}

/** Move to a branch or commit (what checkout and switch share). */
async function moveTo(g, target, { create = null, force = false, detach = false, start = null }) {
  const current = await g.branch();
  if (create) {
    const exists = await git.resolveRef({ ...g.repo, ref: `refs/heads/${create}` }).then(
      () => true,
      () => false,
    );
    if (exists) throw fatal(`a branch named '${create}' already exists`);
    const head = await g.head();
    const oid = start ? await g.resolve(start) : head;
    if (!oid) {
      // An unborn branch: HEAD moves, nothing to check out.
      await git.writeRef({ ...g.repo, ref: "HEAD", value: `refs/heads/${create}`, symbolic: true, force: true });
      return g.warn(`Switched to a new branch '${create}'\n`);
    }
    if (oid !== head) await checkoutTree(g, oid, force);
    await git.writeRef({ ...g.repo, ref: `refs/heads/${create}`, value: oid });
    await git.writeRef({ ...g.repo, ref: "HEAD", value: `refs/heads/${create}`, symbolic: true, force: true });
    return g.warn(`Switched to a new branch '${create}'\n`);
  }
  const isBranch =
    !detach
    && (await git.resolveRef({ ...g.repo, ref: `refs/heads/${target}` }).then(
      () => true,
      () => false,
    ));
  if (isBranch && target === current) return g.warn(`Already on '${target}'\n`);
  const oid = await g.resolve(target);
  await checkoutTree(g, oid, force);
  if (isBranch) {
    await git.writeRef({ ...g.repo, ref: "HEAD", value: `refs/heads/${target}`, symbolic: true, force: true });
    return g.warn(`Switched to branch '${target}'\n`);
  }
  await git.writeRef({ ...g.repo, ref: "HEAD", value: oid, force: true });
  const { commit: c } = await git.readCommit({ ...g.repo, oid });
  g.warn(
    `Note: switching to '${target}'.\n\nYou are in 'detached HEAD' state. You can look around, make experimental\nchanges and commit them, and you can discard any commits you make in this\nstate without impacting any branches by switching back to a branch.\n\nHEAD is now at ${short(oid)} ${subject(c.message)}\n`,
  );
}

/** Make the index and working tree the commit's, keeping local changes that do not
 * touch what differs (git's two-way merge); refuses, naming them, when they would be lost. */
async function checkoutTree(g, oid, force) {
  await checkTree(g, oid);
  const head = await g.head();
  if (!force && head) {
    const differ = new Set(
      (await changes(g, { kind: "tree", oid: head }, { kind: "tree", oid }, [], { renames: false })).map((c) => c.path),
    );
    const st = await statusOf(g);
    const lost = st.entries.filter((e) => differ.has(e.path)).map((e) => e.path);
    // Untracked files the commit would write over.
    for (const path of st.untracked) {
      for (const p of differ) if (p === path || (path.endsWith("/") && p.startsWith(path))) lost.push(p);
    }
    if (lost.length > 0) {
      throw new GitError(
        `error: Your local changes to the following files would be overwritten by checkout:\n${lost.map((p) => `\t${p}\n`).join("")}Please commit your changes or stash them before you switch branches.\nAborting\n`,
        1,
      );
    }
  }
  await git.checkout({ ...g.repo, ref: oid, noUpdateHead: true, force: true });
}

export async function checkout(g, args) {
  const { flags, rest, paths } = parseArgs("checkout", args, {
    b: "create=",
    B: "reset=",
    f: "force",
    force: "force",
    q: "quiet",
    quiet: "quiet",
    detach: "detach",
    p: "patch",
  });
  if (flags.patch) throw unsupported("checkout -p");
  if (paths !== null || (rest.length > 0 && !flags.create && !flags.reset && !(await g.isRevision(rest[0])))) {
    // checkout [<rev>] -- <paths>: files from the index, or from a commit.
    const [rev, ...more] = paths === null ? [null, ...rest] : [rest[0] ?? null, ...paths];
    return restoreFiles(g, more, { source: rev, staged: Boolean(rev), worktree: true });
  }
  if (flags.reset) {
    await git.deleteBranch({ ...g.repo, ref: flags.reset }).catch(() => {});
    return moveTo(g, null, { create: flags.reset, force: flags.force, start: rest[0] ?? null });
  }
  if (flags.create) return moveTo(g, null, { create: flags.create, force: flags.force, start: rest[0] ?? null });
  if (rest.length === 0) throw fatal("you must name a branch or commit to check out");
  return moveTo(g, rest[0], { force: flags.force, detach: flags.detach });
}

export async function switchTo(g, args) {
  const { flags, rest } = parseArgs("switch", args, {
    c: "create=",
    create: "create=",
    C: "reset=",
    d: "detach",
    detach: "detach",
    f: "force",
    force: "force",
    "discard-changes": "force",
    q: "quiet",
  });
  if (flags.reset) {
    await git.deleteBranch({ ...g.repo, ref: flags.reset }).catch(() => {});
    return moveTo(g, null, { create: flags.reset, force: flags.force, start: rest[0] ?? null });
  }
  if (flags.create) return moveTo(g, null, { create: flags.create, force: flags.force, start: rest[0] ?? null });
  if (rest.length === 0) throw fatal("missing branch or commit argument");
  if (
    !flags.detach
    && !(await git.resolveRef({ ...g.repo, ref: `refs/heads/${rest[0]}` }).then(
      () => true,
      () => false,
    ))
  ) {
    if (await g.isRevision(rest[0]))
      throw fatal(
        "a branch is expected, got commit '"
          + rest[0]
          + "'\nhint: If you want to detach HEAD at the commit, try again with the --detach option.",
      );
    throw fatal(`invalid reference: ${rest[0]}`);
  }
  return moveTo(g, rest[0], { force: flags.force, detach: flags.detach });
}

/** Files back from the index (worktree) or a commit (`source`), into the index
 * (`staged`) and/or the working tree (`worktree`). */
async function restoreFiles(g, pathArgs, { source, staged, worktree }) {
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
      if (
        type === "blob"
        && matches(
          path,
          specs.map((s) => (s === "" ? "" : s)),
        )
      )
        index.set(path, { oid: await entry?.oid(), mode: await entry?.mode() });
      return null;
    },
  });
  for (const spec of specs) {
    if (![...index.keys()].some((p) => matches(p, [spec])) && !(staged && !from)) {
      throw new GitError(`error: pathspec '${g.shown(spec)}' did not match any file(s) known to git\n`, 1);
    }
  }
  if (staged) {
    for (const spec of specs) {
      const tracked = (await git.listFiles(g.repo)).filter((f) => matches(f, [spec]));
      for (const path of new Set([...tracked, ...[...index.keys()].filter((p) => matches(p, [spec]))])) {
        await git
          .resetIndex({ ...g.repo, filepath: path, ref: from ?? (await g.head()) ?? undefined })
          .catch(async () => git.remove({ ...g.repo, filepath: path }));
      }
    }
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
    const head = await g.head();
    for (const path of (await git.listFiles(g.repo)).filter((f) => matches(f, specs))) {
      await git
        .resetIndex({ ...g.repo, filepath: path, ...(source && head ? { ref: await g.resolve(source) } : {}) })
        .catch(() => git.remove({ ...g.repo, filepath: path }));
    }
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
      if (oid) await git.resetIndex({ ...g.repo, filepath: path, ref: oid }).catch(() => git.remove({ ...g.repo, filepath: path }));
      else await git.remove({ ...g.repo, filepath: path });
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

export async function merge(g, args) {
  const { flags, rest } = parseArgs("merge", args, {
    m: "message*",
    message: "message*",
    "no-ff": "noFf",
    "ff-only": "ffOnly",
    ff: "ff",
    "no-edit": "noEdit",
    abort: "abort",
    q: "quiet",
    "no-commit": "noCommit",
    squash: "squash",
    continue: "continue",
    s: "strategy=",
    X: "strategyOption=",
  });
  if (flags.squash || flags.noCommit || flags.strategy || flags.strategyOption)
    throw unsupported(`merge ${flags.squash ? "--squash" : flags.noCommit ? "--no-commit" : "-s/-X"}`);
  if (flags.abort) {
    if (!(await mergeHead(g))) throw fatal("There is no merge to abort (MERGE_HEAD missing).");
    return reset(g, ["--hard", "-q"]);
  }
  if (flags.continue) return commit(g, []);
  if (rest.length !== 1) throw unsupported(rest.length === 0 ? "merge without a branch" : "merge of more than one branch (octopus)");
  const head = await g.head();
  if (!head) throw fatal("no commits yet to merge into");
  const theirs = await g.resolve(rest[0]);
  await checkTree(g, theirs);
  const branch = await g.branch();
  const ours = branch ?? head;
  if (theirs === head || (await git.isDescendent({ ...g.repo, oid: head, ancestor: theirs }))) return g.print("Already up to date.\n");
  const ff = !flags.noFf && (await git.isDescendent({ ...g.repo, oid: theirs, ancestor: head }));
  if (flags.ffOnly && !ff) throw fatal("Not possible to fast-forward, aborting.");
  const dirty = (await statusOf(g)).entries;
  const them = new Set(
    (await changes(g, { kind: "tree", oid: head }, { kind: "tree", oid: theirs }, [], { renames: false })).map((c) => c.path),
  );
  const lost = dirty.filter((e) => them.has(e.path));
  if (lost.length > 0) {
    throw new GitError(
      `error: Your local changes to the following files would be overwritten by merge:\n${lost.map((e) => `\t${e.path}\n`).join("")}Please commit your changes or stash them before you merge.\nAborting\n`,
      1,
    );
  }
  const list = await changes(g, { kind: "tree", oid: head }, { kind: "tree", oid: theirs });
  if (ff) {
    await checkoutTree(g, theirs, true);
    await git.writeRef({ ...g.repo, ref: branch ? `refs/heads/${branch}` : "HEAD", value: theirs, force: true });
    g.print(`Updating ${short(head)}..${short(theirs)}\nFast-forward\n${statText(await counts(list))}${modeLines(list)}`);
    return;
  }
  const message = flags.message
    ? cleanMessage(flags.message.join("\n\n"))
    : `Merge branch '${rest[0]}'${branch && branch !== "main" && branch !== "master" ? ` into ${branch}` : ""}\n`;
  const author = await g.person("AUTHOR");
  const committer = await g.person("COMMITTER");
  try {
    const result = await git.merge({ ...g.repo, ours, theirs, fastForward: false, abortOnConflict: false, message, author, committer });
    const oid = /** @type {string} */ (result.oid);
    await checkoutTree(g, oid, true);
    if (!branch) await git.writeRef({ ...g.repo, ref: "HEAD", value: oid, force: true });
    const done = await changes(g, { kind: "tree", oid: head }, { kind: "tree", oid });
    g.print(`Merge made by the 'ort' strategy.\n${statText(await counts(done))}${modeLines(done)}`);
  } catch (err) {
    const e = /** @type {any} */ (err);
    if (e?.code !== "MergeConflictError") throw err;
    const files = e.data?.filepaths ?? [];
    const both = e.data?.bothModified ?? files;
    await g.fs.writeFile(`${g.gitdir}/MERGE_HEAD`, `${theirs}\n`);
    await g.fs.writeFile(
      `${g.gitdir}/MERGE_MSG`,
      `${message}\nConflicts:\n${both.map((p) => `\t${p}\n`).join("")}`
        .replace(/\n\nConflicts:/, "\n# Conflicts:")
        .replace(/\n\t/g, "\n#\t"),
    );
    await g.fs.writeFile(`${g.gitdir}/MERGE_MODE`, "");
    let out = "";
    for (const path of files) out += `Auto-merging ${path}\nCONFLICT (content): Merge conflict in ${path}\n`;
    for (const path of e.data?.deleteByUs ?? []) out += `CONFLICT (modify/delete): ${path} deleted in HEAD and modified in ${rest[0]}.\n`;
    for (const path of e.data?.deleteByTheirs ?? [])
      out += `CONFLICT (modify/delete): ${path} deleted in ${rest[0]} and modified in HEAD.\n`;
    g.print(`${out}Automatic merge failed; fix conflicts and then commit the result.\n`);
    throw new GitError("", 1);
  }
}

export async function stash(g, args) {
  const [op = "push", ...more] = args;
  const { flags, rest } = parseArgs(`stash ${op}`, more, {
    m: "message=",
    message: "message=",
    q: "quiet",
    u: "untracked",
    "include-untracked": "untracked",
    index: "index",
    k: "keepIndex",
  });
  if (flags.untracked || flags.keepIndex || flags.index)
    throw unsupported(`stash ${op} ${flags.untracked ? "-u" : flags.index ? "--index" : "-k"}`);
  const branch = (await g.branch()) ?? "(no branch)";
  const head = await g.head();
  if (!head) throw fatal("You do not have the initial commit yet");
  const ref = (n) => `stash@{${n}}`;
  const index = () => {
    const m = /^stash@\{(\d+)\}$|^(\d+)$/.exec(rest[0] ?? "0");
    if (!m) throw fatal(`'${rest[0]}' is not a stash reference`);
    return Number(m[1] ?? m[2]);
  };
  switch (op) {
    case "push":
    case "save": {
      const st = await statusOf(g);
      if (!st.entries.length) return g.print("No local changes to save\n");
      const text = flags.message ?? (op === "save" ? rest.join(" ") : "");
      await git.stash({ ...g.repo, fs: await asPerson(g), op: "push", message: text });
      await fixStashLog(g);
      const top = subject((await g.commit(head)).message);
      g.print(`Saved working directory and index state ${text ? `On ${branch}: ${text}` : `WIP on ${branch}: ${short(head)} ${top}`}\n`);
      return;
    }
    case "list": {
      const log = await g.fs.readFile(`${g.gitdir}/logs/refs/stash`, "utf8").catch(() => "");
      const entries = log.split("\n").filter(Boolean).reverse();
      g.print(entries.map((line, i) => `${ref(i)}: ${line.slice(line.indexOf("\t") + 1)}\n`).join(""));
      return;
    }
    case "pop":
    case "apply": {
      const n = index();
      const oid = await stashOid(g, n);
      await checkTree(g, oid);
      await git.stash({ ...g.repo, op: "apply", refIdx: n });
      g.print(await longStatus(g, await statusOf(g)));
      if (op === "pop") {
        await git.stash({ ...g.repo, op: "drop", refIdx: n });
        g.print(`Dropped refs/${ref(n)} (${oid})\n`);
      }
      return;
    }
    case "drop": {
      const n = index();
      const oid = await stashOid(g, n);
      await git.stash({ ...g.repo, op: "drop", refIdx: n });
      g.print(`Dropped refs/${ref(n)} (${oid})\n`);
      return;
    }
    case "clear":
      await git.stash({ ...g.repo, op: "clear" });
      return;
    case "show":
      throw unsupported("stash show");
    default:
      throw unsupported(`stash ${op}`);
  }
}

/** isomorphic-git's stash takes its author only from the repository's config: it gets
 * this call's (git's environment, config, the page's) through a view of the filesystem
 * in which .git/config also holds it (nothing is written). */
async function asPerson(g) {
  const me = await g.person("COMMITTER");
  const config = `${g.gitdir}/config`;
  const extra = `\n[user]\n\tname = ${me.name}\n\temail = ${me.email}\n`;
  return new Proxy(g.fs, {
    get(target, key) {
      if (key !== "readFile") return Reflect.get(target, key);
      return async (path, options) => {
        const data = await target.readFile(path, options);
        if (path !== config) return data;
        return typeof data === "string" ? data + extra : new Uint8Array([...data, ...new TextEncoder().encode(extra)]);
      };
    },
  });
}

/** isomorphic-git writes the stash's reflog line without git's "Name <email>" (so
 * git's `stash list` cannot read it): the newest line is written again as git would. */
async function fixStashLog(g) {
  const path = `${g.gitdir}/logs/refs/stash`;
  const lines = (await g.fs.readFile(path, "utf8")).split("\n").filter(Boolean);
  const last = lines.pop() ?? "";
  const [head, message = ""] = last.split("\t");
  const oid = head.split(" ")[1];
  const before = lines.length ? lines[lines.length - 1].split(" ")[1] : "0".repeat(40);
  const me = await g.person("COMMITTER");
  const off = -me.timezoneOffset;
  const zone = `${off < 0 ? "-" : "+"}${String(Math.floor(Math.abs(off) / 60)).padStart(2, "0")}${String(Math.abs(off) % 60).padStart(2, "0")}`;
  lines.push(`${before} ${oid} ${me.name} <${me.email}> ${me.timestamp} ${zone}\t${message}`);
  await g.fs.writeFile(path, `${lines.join("\n")}\n`);
}

async function stashOid(g, n) {
  const log = await g.fs.readFile(`${g.gitdir}/logs/refs/stash`, "utf8").catch(() => "");
  const lines = log.split("\n").filter(Boolean).reverse();
  const line = lines[n];
  if (!line) throw new GitError(`error: stash@{${n}} is not a valid reference\n`, 1);
  return line.split(" ")[1];
}

export async function tag(g, args) {
  const { flags, rest } = parseArgs("tag", args, {
    a: "annotate",
    annotate: "annotate",
    m: "message*",
    message: "message*",
    d: "delete",
    delete: "delete",
    l: "list",
    list: "list",
    f: "force",
    force: "force",
    n: "lines=",
    s: "sign",
  });
  if (flags.sign) throw unsupported("tag -s");
  if (flags.delete) {
    for (const name of rest) {
      const oid = await git.resolveRef({ ...g.repo, ref: `refs/tags/${name}` }).catch(() => null);
      if (!oid) throw new GitError(`error: tag '${name}' not found.\n`, 1);
      await git.deleteTag({ ...g.repo, ref: name });
      g.print(`Deleted tag '${name}' (was ${short(oid)})\n`);
    }
    return;
  }
  if (rest.length === 0 || flags.list) {
    const names = (await git.listTags(g.repo)).sort();
    const pattern = rest[0]
      ? new RegExp(
          `^${rest[0]
            .replace(/[.+^${}()|[\]\\]/g, "\\$&")
            .replace(/\*/g, ".*")
            .replace(/\?/g, ".")}$`,
        )
      : null;
    g.print(
      names
        .filter((n) => !pattern || pattern.test(n))
        .map((n) => `${n}\n`)
        .join(""),
    );
    return;
  }
  const [name, target = "HEAD"] = rest;
  const object = await g.resolve(target, { peel: false });
  const exists = await git.resolveRef({ ...g.repo, ref: `refs/tags/${name}` }).then(
    () => true,
    () => false,
  );
  if (exists && !flags.force) throw fatal(`tag '${name}' already exists`);
  if (flags.annotate || flags.message) {
    if (!flags.message)
      throw new GitError('git: tag -a without -m is not supported here (there is no editor): use git tag -a NAME -m "message"\n', 129);
    const tagger = await g.person("COMMITTER");
    await git.annotatedTag({
      ...g.repo,
      ref: name,
      object,
      message: cleanMessage(flags.message.join("\n\n")),
      tagger,
      force: Boolean(flags.force),
    });
  } else await git.tag({ ...g.repo, ref: name, object, force: Boolean(flags.force) });
}

export async function config(g, fs, args, repoDir) {
  const { flags, rest } = parseArgs("config", args, {
    global: "global",
    local: "local",
    get: "get",
    unset: "unset",
    l: "list",
    list: "list",
    "get-all": "get",
    add: "add",
    "show-origin": "origin",
    system: "system",
    bool: "bool",
    int: "int",
  });
  if (flags.system || flags.origin) throw unsupported(`config --${flags.system ? "system" : "show-origin"}`);
  const home = g?.env.HOME ?? "/work";
  const useGlobal = flags.global || !repoDir;
  if (!useGlobal && !g) throw fatal("not in a git directory");
  if (flags.list) {
    const own = await globalConfig(g ?? { fs, env: { HOME: home } });
    const lines = useGlobal
      ? own.entries
      : [...own.entries, ...new IniConfig("", await fs.readFile(`${repoDir}/.git/config`, "utf8").catch(() => "")).entries];
    return lines.map(([k, v]) => `${k}=${v}\n`).join("");
  }
  const [key, value] = rest;
  if (!key) throw new GitError("error: wrong number of arguments, should be from 1 to 2\n", 129);
  if (useGlobal) {
    const own = await globalConfig(g ?? { fs, env: { HOME: home } });
    if (value === undefined && !flags.unset) {
      const v = own.get(key);
      if (v === undefined) throw new GitError("", 1);
      return `${v}\n`;
    }
    own.set(key, flags.unset ? undefined : value);
    await fs.writeFile(own.path, own.text());
    return "";
  }
  if (value === undefined && !flags.unset) {
    const v = (await git.getConfig({ ...g.repo, path: key })) ?? (await globalConfig(g)).get(key);
    if (v === undefined) throw new GitError("", 1);
    return `${v}\n`;
  }
  await git.setConfig({ ...g.repo, path: key, value: flags.unset ? undefined : value, append: Boolean(flags.add) });
  return "";
}

export async function remote(g, args) {
  const [op, ...more] = args;
  const { flags, rest } = parseArgs(`remote ${op ?? ""}`.trim(), op?.startsWith("-") ? args : more, { v: "verbose", verbose: "verbose" });
  const remotes = await git.listRemotes(g.repo);
  if (op === undefined || op.startsWith("-")) {
    g.print(
      remotes.map((r) => (flags.verbose ? `${r.remote}\t${r.url} (fetch)\n${r.remote}\t${r.url} (push)\n` : `${r.remote}\n`)).join(""),
    );
    return;
  }
  if (op === "add") {
    const [name, url] = rest;
    if (!name || !url) throw new GitError("usage: git remote add <name> <url>\n", 129);
    if (remotes.some((r) => r.remote === name)) throw new GitError(`error: remote ${name} already exists.\n`, 3);
    await git.addRemote({ ...g.repo, remote: name, url });
    return;
  }
  if (op === "remove" || op === "rm") {
    if (!remotes.some((r) => r.remote === rest[0])) throw new GitError(`error: No such remote: '${rest[0]}'\n`, 2);
    await git.deleteRemote({ ...g.repo, remote: rest[0] });
    return;
  }
  if (op === "get-url") {
    const r = remotes.find((x) => x.remote === rest[0]);
    if (!r) throw new GitError(`error: No such remote '${rest[0]}'\n`, 2);
    g.print(`${r.url}\n`);
    return;
  }
  if (op === "set-url") {
    if (!remotes.some((r) => r.remote === rest[0])) throw new GitError(`error: No such remote '${rest[0]}'\n`, 2);
    await git.setConfig({ ...g.repo, path: `remote.${rest[0]}.url`, value: rest[1] });
    return;
  }
  throw unsupported(`remote ${op}`);
}
