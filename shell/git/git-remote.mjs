// Remotes: `clone`, `fetch`, `pull`, `push`, `ls-remote` over git's smart HTTP, through
// the page. The sandbox has no network: each request goes to the harness and the page
// (`http`, the sandbox's way out), which allows only the URLs of its `network` option
// and adds the credentials its `git.auth` gives, on its side: no credential is ever in
// the sandbox, the worker or the model's context. A push needs the page's `bash` rules
// to allow a `git push` in the command line (checked again in the worker).
import git from "isomorphic-git";
import { Git, GitError, fatal, normalizePath, parseArgs, short, unsupported } from "./git-base.mjs";
import { merge } from "./git-branches.mjs";
import { checkTree } from "./git-tree-check.mjs";

/** @typedef {{request: (r: {url: string, method?: string, headers?: Record<string, string>, body?: any}) => Promise<any>}} Http */

const HOW = "allow the remote's URL with createHarness({network: {allow: [...]}}), and give credentials with git: {auth}";

/** A network failure in git's words, with what the page can do about it. */
function unreachable(url, err) {
  const text = String(/** @type {any} */ (err)?.message ?? err);
  const hint = /not in the allowed network|no network/.test(text) ? `\nhint: the page decides: ${HOW}` : "";
  if (/\b401\b/.test(text)) return fatal(`Authentication failed for '${url}'`);
  return new GitError(`fatal: unable to access '${url}': ${text.replace(/^(Error|TypeError): /, "")}${hint}\n`, 128);
}

async function remoteUrl(g, name) {
  const url = await git.getConfig({ ...g.repo, path: `remote.${name}.url` });
  if (!url) {
    throw new GitError(`fatal: '${name}' does not appear to be a git repository\nfatal: Could not read from remote repository.\n`, 128);
  }
  return url;
}

const checkUrl = (url) => {
  if (!/^https?:\/\//.test(url)) throw unsupported(`a remote that is not http(s): ${url}`);
  if (/^https?:\/\/[^/]*@/.test(url)) throw fatal("a remote URL with credentials in it is refused: the page gives credentials (git.auth)");
};

/** `git clone URL [DIR]` (`-b BRANCH`, `--depth N`, `--single-branch`, `-q`). */
export async function clone(fs, http, cwd, args, context) {
  const { flags, rest } = parseArgs("clone", args, {
    b: "branch=",
    branch: "branch=",
    depth: "depth=",
    "single-branch": "single",
    q: "quiet",
    quiet: "quiet",
    "no-checkout": "noCheckout",
    n: "noCheckout",
    o: "origin=",
    origin: "origin=",
  });
  const [url, target] = rest;
  if (!url) throw new GitError("fatal: You must specify a repository to clone.\n", 129);
  checkUrl(url);
  const name =
    target
    ?? url
      .replace(/\/+$/, "")
      .replace(/\.git$/, "")
      .split("/")
      .pop();
  if (!name) throw fatal(`cannot tell a folder name from '${url}': give one (git clone URL DIR)`);
  const dir = normalizePath(name.startsWith("/") ? name : `${cwd}/${name}`);
  const existing = await fs.readdir(dir).catch(() => null);
  if (existing !== null && existing.length > 0) throw fatal(`destination path '${name}' already exists and is not an empty directory.`);
  const err = [];
  if (!flags.quiet) err.push(`Cloning into '${name}'...\n`);
  if (existing === null) await fs.mkdir(dir).catch(() => {});
  try {
    await git.clone({
      fs,
      http,
      dir,
      url,
      ref: flags.branch,
      depth: flags.depth ? Number(flags.depth) : undefined,
      singleBranch: Boolean(flags.single),
      remote: flags.origin ?? "origin",
      noCheckout: true,
    });
  } catch (e) {
    await fs.rm(dir, { recursive: true }).catch(() => {}); // nothing half-cloned stays
    throw Object.assign(unreachable(url, e), { err });
  }
  const g = new Git({ ...context, fs, dir, cwd });
  const head = await g.head();
  if (head && !flags.noCheckout) {
    try {
      await checkTree(g, head);
    } catch (e) {
      await fs.rm(dir, { recursive: true }).catch(() => {});
      throw Object.assign(e, { err });
    }
    const branch = await g.branch();
    await git.checkout({ ...g.repo, ref: branch || head, force: true });
  } else if (!head && !flags.quiet) err.push("warning: You appear to have cloned an empty repository.\n");
  return err.join("");
}

/** `git fetch [REMOTE]`. */
export async function fetchRemote(g, args) {
  const { flags, rest } = parseArgs("fetch", args, {
    q: "quiet",
    quiet: "quiet",
    all: "all",
    tags: "tags",
    t: "tags",
    prune: "prune",
    p: "prune",
    depth: "depth=",
  });
  const remote = rest[0] ?? "origin";
  const url = await remoteUrl(g, remote);
  checkUrl(url);
  const before = await remoteRefs(g, remote);
  let result;
  try {
    result = await git.fetch({
      ...g.repo,
      http: g.http,
      remote,
      tags: Boolean(flags.tags),
      prune: Boolean(flags.prune),
      depth: flags.depth ? Number(flags.depth) : null,
    });
  } catch (e) {
    throw unreachable(url, e);
  }
  const after = await remoteRefs(g, remote);
  const lines = [];
  for (const [name, oid] of after) {
    const old = before.get(name);
    if (old === oid) continue;
    const shown = name.padEnd(10);
    lines.push(
      old ? `   ${short(old)}..${short(oid)}  ${shown} -> ${remote}/${name}` : ` * [new branch]      ${shown} -> ${remote}/${name}`,
    );
  }
  if (lines.length && !flags.quiet) g.warn(`From ${url}\n${lines.join("\n")}\n`);
  return result;
}

async function remoteRefs(g, remote) {
  const out = new Map();
  for (const name of await git.listBranches({ ...g.repo, remote })) {
    if (name === "HEAD") continue;
    out.set(name, await git.resolveRef({ ...g.repo, ref: `refs/remotes/${remote}/${name}` }));
  }
  return out;
}

/** `git pull [REMOTE [BRANCH]]`: a fetch, then a merge of the remote's branch. */
export async function pull(g, args) {
  const { flags, rest } = parseArgs("pull", args, {
    q: "quiet",
    quiet: "quiet",
    "ff-only": "ffOnly",
    "no-ff": "noFf",
    rebase: "rebase",
    r: "rebase",
    "no-rebase": "noRebase",
  });
  if (flags.rebase) throw unsupported("pull --rebase");
  const remote = rest[0] ?? "origin";
  const branch = rest[1] ?? (await g.branch());
  if (!branch) throw fatal("You are not currently on a branch.");
  await fetchRemote(g, [remote, ...(flags.quiet ? ["-q"] : [])]);
  const ref = `refs/remotes/${remote}/${branch}`;
  const theirs = await git.resolveRef({ ...g.repo, ref }).catch(() => null);
  if (!theirs) throw fatal(`couldn't find remote ref ${branch}`);
  await merge(g, [`${remote}/${branch}`, ...(flags.ffOnly ? ["--ff-only"] : []), ...(flags.noFf ? ["--no-ff"] : [])]);
}

/** `git push [REMOTE [REF[:REMOTEREF]]]` (`-u`, `--force`, `--delete`, `--tags` refused). */
export async function push(g, args) {
  const { flags, rest } = parseArgs("push", args, {
    u: "upstream",
    "set-upstream": "upstream",
    f: "force",
    force: "force",
    q: "quiet",
    quiet: "quiet",
    d: "delete",
    delete: "delete",
    tags: "tags",
    all: "all",
  });
  if (flags.tags || flags.all) throw unsupported(`push --${flags.tags ? "tags" : "all"}`);
  const remote = rest[0] ?? "origin";
  const url = await remoteUrl(g, remote);
  checkUrl(url);
  const spec = rest[1] ?? (await g.branch());
  if (!spec) throw fatal("You are not currently on a branch.");
  const [local, remoteRef = local] = spec.split(":");
  const before = await git.resolveRef({ ...g.repo, ref: `refs/remotes/${remote}/${remoteRef}` }).catch(() => null);
  let result;
  try {
    result = await git.push({
      ...g.repo,
      http: g.http,
      remote,
      ref: local,
      remoteRef,
      force: Boolean(flags.force),
      delete: Boolean(flags.delete),
    });
  } catch (e) {
    const text = String(/** @type {any} */ (e)?.message ?? e);
    if (/not a simple fast-forward|PushRejectedError/.test(text)) {
      throw new GitError(
        `To ${url}\n ! [rejected]        ${local} -> ${remoteRef} (non-fast-forward)\nerror: failed to push some refs to '${url}'\nhint: Updates were rejected because the tip of your current branch is behind\nhint: its remote counterpart. Integrate the remote changes (e.g.\nhint: 'git pull ...') before pushing again.\n`,
        1,
      );
    }
    throw unreachable(url, e);
  }
  const status = result?.refs?.[`refs/heads/${remoteRef}`];
  if (result?.ok === false || (status && status.ok === false)) {
    throw new GitError(
      `To ${url}\n ! [remote rejected] ${local} -> ${remoteRef} (${status?.error ?? result?.error ?? "rejected"})\nerror: failed to push some refs to '${url}'\n`,
      1,
    );
  }
  if (flags.upstream) {
    await git.setConfig({ ...g.repo, path: `branch.${local}.remote`, value: remote });
    await git.setConfig({ ...g.repo, path: `branch.${local}.merge`, value: `refs/heads/${remoteRef}` });
  }
  if (flags.quiet) return;
  const now = flags.delete ? null : await git.resolveRef({ ...g.repo, ref: local });
  const line = flags.delete
    ? ` - [deleted]         ${remoteRef}`
    : before && now
      ? `   ${short(before)}..${short(now)}  ${local} -> ${remoteRef}`
      : ` * [new branch]      ${local} -> ${remoteRef}`;
  g.warn(`To ${url}\n${line}\n${flags.upstream ? `branch '${local}' set up to track '${remote}/${remoteRef}'.\n` : ""}`);
}

/** `git ls-remote [REMOTE|URL]`. */
export async function lsRemote(g, args, http) {
  const { rest } = parseArgs("ls-remote", args, { heads: "heads", tags: "tags", q: "quiet" });
  const target = rest[0] ?? "origin";
  const url = /^https?:\/\//.test(target) ? target : await remoteUrl(/** @type {Git} */ (g), target);
  checkUrl(url);
  let refs;
  try {
    refs = await git.listServerRefs({ http, url, protocolVersion: 1, symrefs: true });
  } catch (e) {
    throw unreachable(url, e);
  }
  return refs.map((r) => `${r.oid}\t${r.ref}\n`).join("");
}
