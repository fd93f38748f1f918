// The rest of a repository's refs and settings: stash (isomorphic-git's, with its reflog
// written as git reads it), tag, config (the repository's and ~/.gitconfig), remote.
import git from "isomorphic-git";
import { GitError, IniConfig, cleanMessage, fatal, globalConfig, parseArgs, short, subject, unsupported } from "./git-base.mjs";
import { longStatus, statusOf } from "./git-status.mjs";
import { checkTree } from "./git-tree-check.mjs";

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
