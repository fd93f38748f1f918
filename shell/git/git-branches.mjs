// git's branches: branch, checkout/switch (a commit checked whole before it is written,
// local changes kept or named), merge (fast-forward, three-way, a conflict's markers and
// MERGE_HEAD).
import git from "isomorphic-git";
import { GitError, cleanMessage, fatal, parseArgs, short, subject, unsupported } from "./git-base.mjs";
import { changes, counts, modeLines, statText } from "./git-diff.mjs";
import { mergeHead, statusOf } from "./git-status.mjs";
import { checkTree } from "./git-tree-check.mjs";
import { commit, reset, restoreFiles } from "./git-commands.mjs";

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
