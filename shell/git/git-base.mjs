// What every git subcommand shares (shell/git/git.mjs): the context of one call, its
// flags, its errors, paths, revisions, identities and dates, in git's own words.
import git from "isomorphic-git";
import { normalize as normalizePath } from "../fs-adapter.mjs";

/** A git failure: its text goes to stderr as git prints it, with git's exit code
 * (128 fatal, 129 usage, 1 a refusal). */
export class GitError extends Error {
  constructor(text, exitCode = 128) {
    super(text);
    this.exitCode = exitCode;
  }
}

export const fatal = (message) => new GitError(`fatal: ${message}\n`, 128);

/** What this git does not do, said plainly (never something else instead). */
export const unsupported = (what) => new GitError(`git: '${what}' is not supported here\n`, 129);

/**
 * Parse a subcommand's arguments by its spec: each spelling ("a", "all", "m",
 * "message") names a canonical flag; a trailing "=" takes a value ("message="), a
 * trailing "*" collects every value. Short flags combine ("-am msg"); "--" ends the
 * flags; numbers ("-5") are `number`. An unknown flag is unsupported, by name.
 * @param {string} command @param {string[]} args @param {Record<string, string>} spec
 * @returns {{flags: Record<string, any>, rest: string[], paths: string[] | null}}
 */
export function parseArgs(command, args, spec) {
  /** @type {Record<string, any>} */
  const flags = {};
  const rest = [];
  let paths = null;
  const set = (spelling, value, more) => {
    const target = spec[spelling];
    if (target === undefined) throw unsupported(`${command} ${spelling.length === 1 ? "-" : "--"}${spelling}`);
    const name = target.replace(/[=*]$/, "");
    if (!target.endsWith("=") && !target.endsWith("*")) {
      if (value !== undefined) throw new GitError(`error: option \`${spelling}' takes no value\n`, 129);
      // "--no-x" turns off "--x" when both name the same flag ("decorate"/"no-decorate").
      flags[name] = !(spelling.startsWith("no-") && spec[spelling.slice(3)] === target);
      return false;
    }
    let v = value;
    let used = false;
    if (v === undefined) {
      if (more.length === 0) throw new GitError(`error: option \`${spelling}' requires a value\n`, 129);
      v = more.shift();
      used = true;
    }
    if (target.endsWith("*")) flags[name] = [...(flags[name] ?? []), v];
    else flags[name] = v;
    return used;
  };
  const queue = [...args];
  while (queue.length > 0) {
    const arg = /** @type {string} */ (queue.shift());
    if (paths !== null) paths.push(arg);
    else if (arg === "--") paths = [];
    else if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      if (eq > 0) set(arg.slice(2, eq), arg.slice(eq + 1), queue);
      else set(arg.slice(2), undefined, queue);
    } else if (/^-\d+$/.test(arg) && !("number" in flags) && spec.number) flags.number = arg.slice(1);
    else if (arg.startsWith("-") && arg.length > 1) {
      for (let i = 1; i < arg.length; i++) {
        const target = spec[arg[i]];
        if (target?.endsWith("=") || target?.endsWith("*")) {
          const value = arg.slice(i + 1);
          set(arg[i], value === "" ? undefined : value, queue);
          break;
        }
        set(arg[i], undefined, queue);
      }
    } else rest.push(arg);
  }
  return { flags, rest, paths };
}

/** One git call: the repository and where it was called from. */
export class Git {
  /**
   * @param {{fs: any, dir: string, cwd: string, env: Record<string, string>, identity: {name: string, email: string}, stdin: string, now: () => number, http?: any}} o
   */
  constructor({ fs, dir, cwd, env, identity, stdin, now, http = null }) {
    this.stdin = stdin;
    this.http = http; // the way to a remote, through the page (git-remote.mjs)
    this.fs = fs;
    this.dir = dir;
    this.gitdir = `${dir}/.git`;
    this.cwd = cwd;
    this.env = env;
    this.identity = identity;
    this.now = now;
    this.cache = {};
    this.out = [];
    this.err = [];
  }

  /** isomorphic-git's common arguments. */
  get repo() {
    return { fs: this.fs, dir: this.dir, gitdir: this.gitdir, cache: this.cache };
  }

  print(text) {
    this.out.push(text);
  }

  warn(text) {
    this.err.push(text);
  }

  /** The cwd's path inside the repository ("" at its top, "a/b/" below). */
  get prefix() {
    return this.cwd === this.dir ? "" : `${this.cwd.slice(this.dir.length + 1)}/`;
  }

  /** A path the user gave (relative to the cwd) as the repository's ("" for its top). */
  inRepo(path) {
    const abs = normalizePath(path.startsWith("/") ? path : `${this.cwd}/${path}`);
    if (abs === this.dir) return "";
    if (!abs.startsWith(`${this.dir}/`)) throw fatal(`${path}: '${path}' is outside repository at '${this.dir}'`);
    return abs.slice(this.dir.length + 1);
  }

  /** A repository path as git shows it to the user: relative to the cwd. */
  shown(path) {
    const from = this.prefix.split("/").filter(Boolean);
    const to = path.split("/");
    let i = 0;
    while (i < from.length && i < to.length - 1 && from[i] === to[i]) i++;
    return [...from.slice(i).map(() => ".."), ...to.slice(i)].join("/");
  }

  async branch() {
    return (await git.currentBranch({ ...this.repo, fullname: false })) ?? null;
  }

  /** HEAD's commit, or null before the first commit. */
  async head() {
    try {
      return await git.resolveRef({ ...this.repo, ref: "HEAD" });
    } catch {
      return null;
    }
  }

  /** A revision as git reads one (a ref, a full or short id, `rev~n`, `rev^`, `rev^n`,
   * `@`), peeled to its commit unless `peel` is false. */
  async resolve(rev, { peel = true } = {}) {
    const m = /^(.*?)((?:[~^]\d*)*)$/.exec(rev);
    const base = m?.[1] || "HEAD";
    let oid = await this.resolveBase(base === "@" ? "HEAD" : base, rev);
    if (peel || m?.[2]) oid = await this.peel(oid, rev);
    for (const [, op, n] of (m?.[2] ?? "").matchAll(/([~^])(\d*)/g)) {
      const count = n === "" ? 1 : Number(n);
      if (op === "~") {
        for (let i = 0; i < count; i++) oid = await this.parent(oid, 0, rev);
      } else if (count > 0) oid = await this.parent(oid, count - 1, rev);
    }
    return oid;
  }

  async resolveBase(base, rev) {
    for (const ref of [base, `refs/tags/${base}`, `refs/heads/${base}`, `refs/remotes/${base}`]) {
      try {
        return await git.resolveRef({ ...this.repo, ref });
      } catch {}
    }
    if (/^[0-9a-f]{4,40}$/.test(base)) {
      try {
        return await git.expandOid({ ...this.repo, oid: base });
      } catch {}
    }
    throw new GitError(
      `fatal: ambiguous argument '${rev}': unknown revision or path not in the working tree.\nUse '--' to separate paths from revisions, like this:\n'git <command> [<revision>...] -- [<file>...]'\n`,
    );
  }

  async peel(oid, rev) {
    let current = oid;
    for (;;) {
      const { type, object } = await git.readObject({ ...this.repo, oid: current, format: "parsed" });
      if (type === "commit") return current;
      if (type !== "tag") throw fatal(`'${rev}' is a ${type}, not a commit`);
      current = /** @type {any} */ (object).object;
    }
  }

  async parent(oid, index, rev) {
    const { commit } = await git.readCommit({ ...this.repo, oid });
    const parent = commit.parent[index];
    if (!parent) throw fatal(`ambiguous argument '${rev}': unknown revision or path not in the working tree.`);
    return parent;
  }

  async isRevision(rev) {
    try {
      await this.resolve(rev.includes("..") ? rev.split("..")[0] || "HEAD" : rev);
      return true;
    } catch {
      return false;
    }
  }

  async commit(oid) {
    return (await git.readCommit({ ...this.repo, oid })).commit;
  }

  /** Who a commit or tag is by: git's environment, then the repository's and the
   * user's config (`git config`), then the page's (`git.author`), then the default. */
  async person(role = "AUTHOR") {
    const config = async (key) =>
      (await git.getConfig({ ...this.repo, path: key }).catch(() => undefined)) ?? (await globalConfig(this)).get(key);
    const name = this.env[`GIT_${role}_NAME`] || (await config("user.name")) || this.identity.name;
    const email = this.env[`GIT_${role}_EMAIL`] || (await config("user.email")) || this.identity.email;
    const date = parseDate(this.env[`GIT_${role}_DATE`], this.now());
    return { name: identityPart(String(name)), email: identityPart(String(email)), ...date };
  }
}

/** A name or email as git writes it into an object: without "<", ">" or line breaks
 * (which would end the header line and forge the next), trimmed. */
export const identityPart = (text) => text.replace(/[<>\n\r\0]/g, "").trim();

/** The user's own config (~/.gitconfig, HOME is /work): `git config --global`. */
export async function globalConfig(g) {
  const path = `${g.env.HOME || "/work"}/.gitconfig`;
  let text = "";
  try {
    text = await g.fs.readFile(path, "utf8");
  } catch {}
  return new IniConfig(path, text);
}

/** A git config file's keys (section[.subsection].key, lowercased section and key). */
export class IniConfig {
  constructor(path, text) {
    this.path = path;
    this.entries = [];
    let section = "";
    for (const line of text.split("\n")) {
      const head = /^\s*\[\s*([\w.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]/.exec(line);
      if (head) {
        section = head[2] === undefined ? head[1].toLowerCase() : `${head[1].toLowerCase()}.${head[2]}`;
        continue;
      }
      const kv = /^\s*([A-Za-z][\w-]*)\s*(?:=\s*(.*?))?\s*$/.exec(line);
      if (kv && section && !/^\s*[#;]/.test(line)) {
        this.entries.push([`${section}.${kv[1].toLowerCase()}`, unquote(kv[2] ?? "true")]);
      }
    }
  }

  get(key) {
    const k = normalKey(key);
    return [...this.entries].reverse().find(([name]) => name === k)?.[1];
  }

  set(key, value) {
    const k = normalKey(key);
    this.entries = this.entries.filter(([name]) => name !== k);
    if (value !== undefined) this.entries.push([k, value]);
  }

  text() {
    const sections = new Map();
    for (const [key, value] of this.entries) {
      const at = key.lastIndexOf(".");
      const section = key.slice(0, at);
      if (!sections.has(section)) sections.set(section, []);
      sections.get(section).push(`\t${key.slice(at + 1)} = ${value}\n`);
    }
    return [...sections]
      .map(([section, lines]) => {
        const dot = section.indexOf(".");
        const head = dot < 0 ? section : `${section.slice(0, dot)} "${section.slice(dot + 1)}"`;
        return `[${head}]\n${lines.join("")}`;
      })
      .join("");
  }
}

const normalKey = (key) => {
  const first = key.indexOf(".");
  const last = key.lastIndexOf(".");
  if (first < 0) throw new GitError(`error: key does not contain a section: ${key}\n`, 1);
  return first === last
    ? key.toLowerCase()
    : `${key.slice(0, first).toLowerCase()}${key.slice(first, last)}.${key.slice(last + 1).toLowerCase()}`;
};

const unquote = (v) => (v.startsWith('"') && v.endsWith('"') && v.length > 1 ? v.slice(1, -1).replace(/\\(.)/g, "$1") : v);

/** A date as git's environment gives one ("@1700000000 +0100", "1700000000 +0100",
 * ISO 8601), or now; `timezoneOffset` is isomorphic-git's (minutes, sign inverted). */
function parseDate(text, nowMs) {
  const local = { timestamp: Math.floor(nowMs / 1000), timezoneOffset: new Date(nowMs).getTimezoneOffset() };
  if (!text) return local;
  const raw = /^@?(\d+)(?:\s+([+-])(\d\d)(\d\d))?$/.exec(text.trim());
  if (raw) {
    const tz = raw[2] ? (raw[2] === "-" ? 1 : -1) * (Number(raw[3]) * 60 + Number(raw[4])) : 0;
    return { timestamp: Number(raw[1]), timezoneOffset: tz };
  }
  const iso = /^(\d{4}-\d\d-\d\d)[T ](\d\d:\d\d(?::\d\d)?)(?:\s*(Z|[+-]\d\d:?\d\d))?$/.exec(text.trim());
  if (iso) {
    const zone = iso[3] ?? "Z";
    const ms = Date.parse(`${iso[1]}T${iso[2]}${zone === "Z" ? "Z" : `${zone.slice(0, 3)}:${zone.slice(-2)}`}`);
    const tz = zone === "Z" ? 0 : (zone[0] === "-" ? 1 : -1) * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(-2)));
    if (!Number.isNaN(ms)) return { timestamp: Math.floor(ms / 1000), timezoneOffset: tz };
  }
  throw fatal(`invalid date format: ${text}`);
}

const DAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** A date as `git log` prints it: "Tue Nov 14 22:13:20 2023 +0000", in its own zone. */
export function formatDate({ timestamp, timezoneOffset }) {
  const d = new Date((timestamp - timezoneOffset * 60) * 1000);
  const pad = (n) => String(n).padStart(2, "0");
  const off = -timezoneOffset;
  const zone = `${off < 0 ? "-" : "+"}${pad(Math.floor(Math.abs(off) / 60))}${pad(Math.abs(off) % 60)}`;
  const time = `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
  return `${DAYS[d.getUTCDay()]} ${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()} ${time} ${d.getUTCFullYear()} ${zone}`;
}

export { normalizePath };

export const short = (oid) => oid.slice(0, 7);

export const plural = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** Whether `path` is matched by one of the pathspecs (repository paths; "" is all). */
export function matches(path, specs) {
  if (!specs || specs.length === 0) return true;
  return specs.some((s) => s === "" || path === s || path.startsWith(`${s}/`));
}

/** Whether a walk must go into folder `dir` for these pathspecs. */
export function within(dir, specs) {
  if (!specs || specs.length === 0 || dir === ".") return true;
  return specs.some((s) => s === "" || dir === s || dir.startsWith(`${s}/`) || s.startsWith(`${dir}/`));
}

/** A commit message as git keeps one given by -m: blank lines at either end and
 * trailing spaces dropped, runs of blank lines made one, a final newline. */
export function cleanMessage(text) {
  const lines = text.split("\n").map((l) => l.replace(/\s+$/, ""));
  const out = [];
  for (const line of lines) {
    if (line === "" && (out.length === 0 || out[out.length - 1] === "")) continue;
    out.push(line);
  }
  while (out.length > 0 && out[out.length - 1] === "") out.pop();
  return out.length === 0 ? "" : `${out.join("\n")}\n`;
}

export const subject = (message) => message.split("\n\n")[0].replace(/\n/g, " ").trim();
