// Reading history: `git log`, `git show`, `git rev-parse`, in git's formats.
import git from "isomorphic-git";
import { GitError, fatal, formatDate, parseArgs, short, subject, unsupported } from "./git-base.mjs";
import { changes, showChanges } from "./git-diff.mjs";

/**
 * Commits reachable from `starts` and not from `hidden`, newest first as git lists them
 * by default (by committer date; equal dates in the order they were reached).
 * @param {import("./git-base.mjs").Git} g
 */
async function* revWalk(g, starts, hidden = [], firstParent = false) {
  const seen = new Set();
  if (hidden.length > 0) {
    for await (const { oid } of revWalk(g, hidden)) seen.add(oid);
  }
  const queue = [];
  const push = async (oid) => {
    if (seen.has(oid)) return;
    seen.add(oid);
    const commit = await g.commit(oid);
    const at = queue.findIndex((q) => q.commit.committer.timestamp < commit.committer.timestamp);
    queue.splice(at < 0 ? queue.length : at, 0, { oid, commit });
  };
  for (const oid of starts) await push(oid);
  while (queue.length > 0) {
    const next = /** @type {{oid: string, commit: any}} */ (queue.shift());
    yield next;
    for (const parent of firstParent ? next.commit.parent.slice(0, 1) : next.commit.parent) await push(parent);
  }
}

/** Every ref but HEAD as [full name, label, the commit it leads to], sorted by name:
 * branches, remote branches, the stash, tags (peeled). */
async function allRefs(g) {
  const refs = [];
  for (const name of await git.listBranches(g.repo))
    refs.push([`refs/heads/${name}`, name, await git.resolveRef({ ...g.repo, ref: `refs/heads/${name}` })]);
  for (const name of await git.listTags(g.repo)) {
    refs.push([`refs/tags/${name}`, `tag: ${name}`, await g.peel(await git.resolveRef({ ...g.repo, ref: `refs/tags/${name}` }), name)]);
  }
  for (const { remote } of await git.listRemotes(g.repo)) {
    for (const name of await git.listBranches({ ...g.repo, remote })) {
      const ref = `refs/remotes/${remote}/${name}`;
      refs.push([ref, `${remote}/${name}`, await git.resolveRef({ ...g.repo, ref })]);
    }
  }
  const stash = await git.resolveRef({ ...g.repo, ref: "refs/stash" }).catch(() => null);
  if (stash) refs.push(["refs/stash", "refs/stash", stash]);
  return refs.sort((a, b) => (a[0] < b[0] ? -1 : 1));
}

/** Refs by the commit they point at, for `--decorate`: "HEAD -> main, tag: v1,
 * origin/main", in git's order (HEAD first, then by full ref name, last first). */
async function decorations(g) {
  const branch = await g.branch();
  const head = await g.head();
  const by = new Map();
  for (const [ref, label, oid] of (await allRefs(g)).reverse()) {
    if (ref !== `refs/heads/${branch}`) by.set(oid, [...(by.get(oid) ?? []), label]);
  }
  if (head) by.set(head, [branch ? `HEAD -> ${branch}` : "HEAD", ...(by.get(head) ?? [])]);
  return by;
}

const LOG_FLAGS = {
  oneline: "oneline",
  n: "number=",
  "max-count": "number=",
  number: "number=",
  stat: "stat",
  shortstat: "shortstat",
  numstat: "numstat",
  p: "patch",
  u: "patch",
  patch: "patch",
  "name-only": "nameOnly",
  "name-status": "nameStatus",
  all: "all",
  reverse: "reverse",
  decorate: "decorate",
  "no-decorate": "decorate",
  "first-parent": "firstParent",
  "no-merges": "noMerges",
  merges: "merges",
  format: "format=",
  pretty: "pretty=",
  "abbrev-commit": "abbrevCommit",
  "no-color": "noColor",
  color: "color=",
  s: "noPatch",
  "no-patch": "noPatch",
  U: "unified=",
  unified: "unified=",
};

/** `git log`. */
export async function log(g, args) {
  const { flags, rest, paths } = parseArgs("log", args, LOG_FLAGS);
  await history(g, flags, rest, paths, "log");
}

/** `git show`: commits with their patch, a tag's header, `rev:path` as the file. */
export async function show(g, args) {
  const { flags, rest, paths } = parseArgs("show", args, LOG_FLAGS);
  const revs = rest.length ? rest : ["HEAD"];
  for (const [i, rev] of revs.entries()) {
    const colon = rev.indexOf(":");
    if (colon >= 0) {
      g.print(await fileAt(g, rev.slice(0, colon) || "HEAD", rev.slice(colon + 1), rev));
      continue;
    }
    let oid = await g.resolve(rev, { peel: false });
    const object = await git.readObject({ ...g.repo, oid, format: "parsed" });
    if (i > 0) g.print("\n");
    if (object.type === "tag") {
      const tag = /** @type {any} */ (object.object);
      g.print(
        `tag ${tag.tag}\nTagger: ${tag.tagger.name} <${tag.tagger.email}>\nDate:   ${formatDate(tag.tagger)}\n\n${tag.message.replace(/\n?$/, "\n")}\n`,
      );
      oid = await g.peel(oid, rev);
    } else if (object.type !== "commit") throw unsupported(`show of a ${object.type}`);
    await history(
      g,
      { ...flags, number: "1", patch: !flags.noPatch && !flags.stat && !flags.nameOnly && !flags.nameStatus, show: true },
      [oid],
      paths,
      "show",
    );
  }
}

async function fileAt(g, rev, path, shown) {
  const oid = await g.resolve(rev);
  const filepath = path.startsWith("./") ? g.inRepo(path) : path;
  try {
    const { blob } = await git.readBlob({ ...g.repo, oid, filepath });
    return new TextDecoder().decode(blob);
  } catch {
    throw fatal(`path '${filepath}' does not exist in '${shown.slice(0, shown.indexOf(":")) || "HEAD"}'`);
  }
}

async function history(g, flags, rest, paths, command) {
  if (flags.color && flags.color !== "never") throw unsupported(`${command} --color=${flags.color}`);
  const specs = (paths ?? []).map((p) => g.inRepo(p));
  const starts = [];
  const hidden = [];
  for (const rev of rest) {
    if (rev.includes("...")) throw unsupported(`${command} ${rev}`);
    if (rev.includes("..")) {
      const [a, b] = rev.split("..");
      hidden.push(await g.resolve(a || "HEAD"));
      starts.push(await g.resolve(b || "HEAD"));
    } else if (rev.startsWith("^")) hidden.push(await g.resolve(rev.slice(1)));
    else if (await g.isRevision(rev)) starts.push(await g.resolve(rev));
    else if (paths === null) specs.push(g.inRepo(rev));
    else await g.resolve(rev);
  }
  if (flags.all) {
    // git's order: every ref by its full name, then HEAD (equal dates keep this order).
    for (const [, , oid] of await allRefs(g)) starts.push(oid);
    const head = await g.head();
    if (head) starts.push(head);
  }
  if (starts.length === 0) {
    const head = await g.head();
    if (!head) {
      const branch = await g.branch();
      throw fatal(`your current branch '${branch}' does not have any commits yet`);
    }
    starts.push(head);
  }
  const format = pickFormat(flags);
  const decorate = flags.decorate || format.decorate ? await decorations(g) : null;
  const limit = flags.number === undefined ? Infinity : Number(flags.number);
  if (limit !== Infinity && (!Number.isInteger(limit) || limit < 0)) throw fatal(`'${flags.number}': not an integer`);
  const picked = [];
  for await (const entry of revWalk(g, [...new Set(starts)], hidden, flags.firstParent)) {
    if (picked.length >= limit) break;
    const merge = entry.commit.parent.length > 1;
    if ((flags.noMerges && merge) || (flags.merges && !merge)) continue;
    if (specs.length > 0 && !(await touches(g, entry, specs))) continue;
    picked.push(entry);
  }
  if (flags.reverse) picked.reverse();
  const output = flags.patch || flags.stat || flags.shortstat || flags.numstat || flags.nameOnly || flags.nameStatus;
  for (const [i, entry] of picked.entries()) {
    const head = format.render(entry, decorate);
    let body = "";
    // A merge shows no changes in a log; `show --stat` shows them against its first parent.
    const merge = entry.commit.parent.length > 1;
    if (output && (!merge || (flags.show && !flags.patch))) {
      const parent = entry.commit.parent[0];
      const list = await changes(g, parent ? { kind: "tree", oid: parent } : { kind: "none" }, { kind: "tree", oid: entry.oid }, specs);
      body = await showChanges(list, flags);
    }
    if (format.separator) {
      if (i > 0) g.print("\n");
      g.print(head);
      if (body) g.print(format.oneline ? body : `${head.endsWith("\n") ? "" : "\n"}${body}`);
      continue;
    }
    if (i > 0 && !format.oneline && !format.userFormat) g.print("\n");
    g.print(head);
    // `show` of a merge: git's combined diff, empty where each file is one parent's.
    if (merge && flags.show && flags.patch && !format.oneline) g.print("\n");
    if (body) g.print(format.oneline || format.userFormat ? body : `\n${body}`);
  }
}

/** Whether a commit changed a path under the pathspecs (against each parent: a merge
 * the same as one of its parents there is left out, as git simplifies history). */
async function touches(g, { oid, commit }, specs) {
  const parents = commit.parent.length ? commit.parent : [null];
  for (const parent of parents) {
    const list = await changes(g, parent ? { kind: "tree", oid: parent } : { kind: "none" }, { kind: "tree", oid }, specs, {
      renames: false,
    });
    if (list.length === 0) return false;
  }
  return true;
}

function pickFormat(flags) {
  const pretty = flags.format !== undefined ? `tformat:${flags.format}` : flags.pretty;
  const decor = (decorate, oid) => {
    const names = decorate?.get(oid);
    return names?.length ? ` (${names.join(", ")})` : "";
  };
  if (flags.oneline || pretty === "oneline") {
    const full = pretty === "oneline" && !flags.abbrevCommit;
    return {
      oneline: true,
      render: ({ oid, commit }, d) => `${full ? oid : short(oid)}${decor(d, oid)} ${subject(commit.message)}\n`,
    };
  }
  if (pretty === undefined || pretty === "medium" || pretty === "short" || pretty === "full") {
    const kind = pretty ?? "medium";
    return {
      render: ({ oid, commit }, d) => {
        let out = `commit ${flags.abbrevCommit ? short(oid) : oid}${decor(d, oid)}\n`;
        if (commit.parent.length > 1) out += `Merge: ${commit.parent.map(short).join(" ")}\n`;
        out += `Author: ${commit.author.name} <${commit.author.email}>\n`;
        if (kind === "full") out += `Commit: ${commit.committer.name} <${commit.committer.email}>\n`;
        if (kind === "medium") out += `Date:   ${formatDate(commit.author)}\n`;
        const message = kind === "short" ? `${subject(commit.message)}\n` : commit.message;
        return `${out}\n${indent(message)}`;
      },
    };
  }
  const m = /^(t?format):(.*)$/s.exec(pretty);
  if (!m) throw unsupported(`--pretty=${pretty}`);
  const template = m[2];
  return {
    userFormat: true,
    separator: m[1] === "format",
    decorate: template.includes("%d") || template.includes("%D"),
    render: ({ oid, commit }, d) => `${expand(template, oid, commit, d)}${m[1] === "tformat" ? "\n" : ""}`,
  };
}

const indent = (message) =>
  message
    .replace(/\n$/, "")
    .split("\n")
    .map((l) => `    ${l}\n`)
    .join("");

function relative(timestamp) {
  const s = Math.max(0, Math.floor(Date.now() / 1000) - timestamp);
  /** @type {[number, string][]} */
  const units = [
    [60, "second"],
    [60, "minute"],
    [24, "hour"],
    [7, "day"],
    [Number.POSITIVE_INFINITY, "week"],
  ];
  let n = s;
  for (const [size, unit] of units) {
    if (n < size) return `${n} ${unit}${n === 1 ? "" : "s"} ago`;
    n = Math.floor(n / size);
  }
  return "";
}

/** `--format` placeholders: %H %h %T %t %P %p %an %ae %ad %ar %at %cn %ce %cd %cr %ct
 * %s %b %B %d %D %n %%; any other is unsupported, by name. */
function expand(template, oid, commit, decorate) {
  return template.replace(/%(H|h|T|t|P|p|an|ae|ad|ar|at|cn|ce|cd|cr|ct|s|b|B|d|D|n|%|.)/g, (all, key) => {
    const names = decorate?.get(oid) ?? [];
    switch (key) {
      case "H":
        return oid;
      case "h":
        return short(oid);
      case "T":
        return commit.tree;
      case "t":
        return short(commit.tree);
      case "P":
        return commit.parent.join(" ");
      case "p":
        return commit.parent.map(short).join(" ");
      case "an":
        return commit.author.name;
      case "ae":
        return commit.author.email;
      case "ad":
        return formatDate(commit.author);
      case "ar":
        return relative(commit.author.timestamp);
      case "at":
        return String(commit.author.timestamp);
      case "cn":
        return commit.committer.name;
      case "ce":
        return commit.committer.email;
      case "cd":
        return formatDate(commit.committer);
      case "cr":
        return relative(commit.committer.timestamp);
      case "ct":
        return String(commit.committer.timestamp);
      case "s":
        return subject(commit.message);
      case "b":
        return commit.message.includes("\n\n") ? commit.message.slice(commit.message.indexOf("\n\n") + 2) : "";
      case "B":
        return commit.message;
      case "d":
        return names.length ? ` (${names.join(", ")})` : "";
      case "D":
        return names.join(", ");
      case "n":
        return "\n";
      case "%":
        return "%";
      default:
        throw new GitError(`git: the format placeholder '${all}' is not supported here\n`, 129);
    }
  });
}

const REV_PARSE_FLAGS = {
  short: "short",
  "short=": "shortLen",
  verify: "verify",
  q: "quiet",
  quiet: "quiet",
  "abbrev-ref": "abbrevRef",
  "symbolic-full-name": "fullName",
  "show-toplevel": "toplevel",
  "git-dir": "gitDir",
  "is-inside-work-tree": "inside",
  "show-prefix": "showPrefix",
};

/** `git rev-parse`. */
export async function revParse(g, args) {
  const norm = args.flatMap((a) => (a.startsWith("--short=") ? a.replace("--short=", "--short= ").split(" ") : [a]));
  const { flags, rest } = parseArgs("rev-parse", norm, { ...REV_PARSE_FLAGS, "short=": "shortLen=" });
  if (flags.toplevel) g.print(`${g.dir}\n`);
  if (flags.gitDir) g.print(g.cwd === g.dir ? ".git\n" : `${g.gitdir}\n`);
  if (flags.inside) g.print("true\n");
  if (flags.showPrefix) g.print(`${g.prefix}\n`);
  const length = flags.shortLen !== undefined ? Math.max(4, Number(flags.shortLen)) : flags.short ? 7 : 40;
  for (const rev of rest) {
    if (flags.abbrevRef || flags.fullName) {
      const base = rev === "@" ? "HEAD" : rev;
      if (base === "HEAD") {
        const branch = await g.branch();
        g.print(`${branch ? (flags.fullName ? `refs/heads/${branch}` : branch) : "HEAD"}\n`);
        continue;
      }
      const full = await git.expandRef({ ...g.repo, ref: base }).catch(() => null);
      if (!full) throw fatal(`ambiguous argument '${rev}': unknown revision or path not in the working tree.`);
      g.print(`${flags.fullName ? full : full.replace(/^refs\/(heads|tags|remotes)\//, "")}\n`);
      continue;
    }
    let oid;
    try {
      oid = await g.resolve(rev.replace(/\^\{commit\}$/, ""), { peel: rev.endsWith("^{commit}") });
    } catch (err) {
      if (flags.verify) throw flags.quiet ? new GitError("", 1) : fatal("Needed a single revision");
      if (rev === "HEAD" && !(await g.head())) {
        throw new GitError(
          "HEAD\nfatal: ambiguous argument 'HEAD': unknown revision or path not in the working tree.\nUse '--' to separate paths from revisions, like this:\n'git <command> [<revision>...] -- [<file>...]'\n",
        );
      }
      throw err;
    }
    g.print(`${oid.slice(0, length)}\n`);
  }
}
