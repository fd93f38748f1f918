// `git` for the sandbox's shell: git's own subcommands, flags and output formats over
// the same /work the other commands see, built on isomorphic-git (npm). What it does
// not do it says ("git: 'rebase' is not supported here"), never something else
// instead. Hooks never run (isomorphic-git has none); links are never made (GitFs).
import { Git, GitError, fatal, normalizePath, unsupported } from "./git-base.mjs";
import * as branches from "./git-branches.mjs";
import * as commands from "./git-commands.mjs";
import { diff } from "./git-diff.mjs";
import { log, revParse, show } from "./git-history.mjs";
import * as refs from "./git-refs.mjs";
import { clone, fetchRemote, lsRemote, pull, push } from "./git-remote.mjs";
import { status } from "./git-status.mjs";

const VERSION = "git version 2.39.5 (pyharness: isomorphic-git 1.44.19)";

/** Each subcommand this git has. */
const SUBCOMMANDS = {
  status,
  add: commands.add,
  rm: commands.rm,
  mv: commands.mv,
  commit: commands.commit,
  log,
  show,
  diff,
  branch: branches.branch,
  checkout: branches.checkout,
  switch: branches.switchTo,
  merge: branches.merge,
  reset: commands.reset,
  restore: commands.restore,
  stash: refs.stash,
  tag: refs.tag,
  "rev-parse": revParse,
  remote: refs.remote,
  fetch: fetchRemote,
  pull,
  push,
};

const HELP = `usage: git [-C <path>] [-c <name>=<value>] <command> [<args>]

The git of this workspace (isomorphic-git underneath) has:
   init status add rm mv commit log show diff branch checkout switch merge
   reset restore stash tag rev-parse config remote clone fetch pull push ls-remote
Remotes go through the page: only the URLs it allows, with the credentials it gives.
`;

/**
 * Run one git command line.
 * @param {string[]} argv the arguments after "git"
 * @param {{fs: import("./git-fs.mjs").GitFs, cwd: string, env: Record<string, string>, identity: {name: string, email: string}, stdin?: string, now?: () => number, http?: import("./git-remote.mjs").Http | null}} o
 * @returns {Promise<{stdout: string, stderr: string, exitCode: number}>}
 */
export async function runGit(argv, { fs, cwd, env, identity, stdin = "", now = Date.now, http = null }) {
  let at = 0;
  let here = normalizePath(cwd);
  const overrides = {};
  for (; at < argv.length && argv[at].startsWith("-"); at++) {
    const arg = argv[at];
    if (arg === "-C") here = normalizePath(argv[++at]?.startsWith("/") ? argv[at] : `${here}/${argv[at] ?? ""}`);
    else if (arg === "-c") {
      const [key, ...value] = (argv[++at] ?? "").split("=");
      if (!/^user\.(name|email)$/i.test(key)) return failed(unsupported(`-c ${key}`));
      overrides[key.toLowerCase() === "user.name" ? "GIT_AUTHOR_NAME" : "GIT_AUTHOR_EMAIL"] = value.join("=");
      overrides[key.toLowerCase() === "user.name" ? "GIT_COMMITTER_NAME" : "GIT_COMMITTER_EMAIL"] = value.join("=");
    } else if (arg === "--no-pager" || arg === "--no-replace-objects" || arg === "-P") continue;
    else if (arg === "--version" || arg === "version") return { stdout: `${VERSION}\n`, stderr: "", exitCode: 0 };
    else if (arg === "--help" || arg === "-h") return { stdout: HELP, stderr: "", exitCode: 0 };
    else return failed(unsupported(arg));
  }
  const [name, ...args] = argv.slice(at);
  if (name === undefined || name === "help") return { stdout: HELP, stderr: "", exitCode: name ? 0 : 1 };
  if (name === "version") return { stdout: `${VERSION}\n`, stderr: "", exitCode: 0 };
  const dirOf = (p) => normalizePath(p.startsWith("/") ? p : `${here}/${p}`);
  try {
    if (name === "init") return { stdout: await commands.init(fs, here, args, dirOf), stderr: "", exitCode: 0 };
    const context = { env: { ...env, ...overrides }, identity, stdin, now, http };
    const remote = ["clone", "fetch", "pull", "push", "ls-remote"].includes(name);
    if (remote && !http) throw new GitError(`git: '${name}' is not supported here: this shell has no way to the network\n`, 129);
    if (name === "clone") return { stdout: "", stderr: await clone(fs, http, here, args, context), exitCode: 0 };
    const dir = await findRepo(fs, here);
    const g = dir ? new Git({ ...context, fs, dir, cwd: here }) : null;
    if (name === "ls-remote" && (g || /^https?:/.test(args.find((a) => !a.startsWith("-")) ?? ""))) {
      return { stdout: await lsRemote(g, args, http), stderr: "", exitCode: 0 };
    }
    if (name === "config") {
      const out = await refs.config(g, fs, args, dir);
      return { stdout: out, stderr: "", exitCode: 0 };
    }
    const run = Object.hasOwn(SUBCOMMANDS, name) ? SUBCOMMANDS[name] : null;
    if (!run) throw unsupported(name);
    if (!g) throw fatal("not a git repository (or any of the parent directories): .git");
    try {
      await run(g, args);
    } catch (err) {
      throw Object.assign(err, { out: g.out, err: g.err });
    }
    return { stdout: g.out.join(""), stderr: g.err.join(""), exitCode: 0 };
  } catch (err) {
    return failed(err);
  }
}

function failed(err) {
  const e = /** @type {any} */ (err);
  const before = { stdout: (e?.out ?? []).join(""), stderr: (e?.err ?? []).join("") };
  if (err instanceof GitError) return { stdout: before.stdout, stderr: before.stderr + err.message, exitCode: err.exitCode };
  const text = e?.code === "ENOSPC" ? String(e.message) : `${e?.code ? `${e.code}: ` : ""}${e?.message ?? e}`;
  return { stdout: before.stdout, stderr: `${before.stderr}fatal: ${text}\n`, exitCode: 128 };
}

/** The repository holding `cwd`: the nearest folder above it with a `.git` folder. */
async function findRepo(fs, cwd) {
  for (let dir = cwd; ; dir = dir.slice(0, dir.lastIndexOf("/")) || "/") {
    try {
      if ((await fs.stat(`${dir === "/" ? "" : dir}/.git`)).isDirectory()) return dir;
    } catch {}
    if (dir === "/") return null;
  }
}
