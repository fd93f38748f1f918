// Changes between two sides of a repository (a commit's tree, the index, the working
// tree) and how git prints them: the unified patch (`diff --git …`, hunks from the npm
// `diff` package, git's function-name context), `--stat`, `--name-only`,
// `--name-status`, `--numstat`, and the summary line a commit prints.
import { structuredPatch } from "diff";
import git from "isomorphic-git";
import { GitError, matches, parseArgs, plural, short, unsupported, within } from "./git-base.mjs";

/** @typedef {{kind: "tree", oid: string} | {kind: "index"} | {kind: "workdir"} | {kind: "none"}} Side */
/** @typedef {{oid: string, mode: number, bytes: () => Promise<Uint8Array>}} Blob */
/** @typedef {{path: string, from?: string, old: Blob | null, new: Blob | null}} Change */

const ZERO = "0000000";

// The working tree read without refreshing the index's file times: reading changes no
// file (a `git diff` or `git status` in a plan run, or anywhere, writes nothing).
const walker = (side) =>
  side.kind === "tree" ? git.TREE({ ref: side.oid }) : side.kind === "index" ? git.STAGE() : git.WORKDIR({ refresh: false });

/**
 * What differs between side `a` and side `b` under the pathspecs, sorted by path; the
 * working tree counts only files git tracks (in the index, or in `a`'s tree). Exact
 * renames (a file gone and one come with the same content) are paired when `renames`.
 * @param {import("./git-base.mjs").Git} g @param {Side} a @param {Side} b
 * @returns {Promise<Change[]>}
 */
export async function changes(g, a, b, specs = [], { renames = true } = {}) {
  const tracking = b.kind === "workdir" && a.kind !== "index";
  // "none": no tree at all (a root commit's parent).
  const trees = [a, b].filter((s) => s.kind !== "none").map(walker);
  if (tracking) trees.push(git.STAGE());
  /** @type {Change[]} */
  const found = [];
  const blob = async (entry) => {
    if (!entry) return null;
    const type = await entry.type();
    if (type !== "blob") return null;
    const [oid, mode] = await Promise.all([entry.oid(), entry.mode()]);
    // The index's entries have no content of their own: their blob is read by id.
    const bytes = async () => {
      const content = await entry.content();
      return content ? new Uint8Array(content) : (await git.readBlob({ ...g.repo, oid })).blob;
    };
    return { oid, mode: normalMode(mode), bytes };
  };
  await git.walk({
    ...g.repo,
    trees,
    map: async (path, entries) => {
      if (path === ".") return true;
      const [ea, eb, es] = a.kind === "none" ? [undefined, ...entries] : entries;
      const [ta, tb] = await Promise.all([ea?.type(), eb?.type()]);
      const folder = ta === "tree" || tb === "tree";
      if (!matches(path, specs)) return folder && within(path, specs) ? true : null;
      const tracked = b.kind !== "workdir" || (tracking ? Boolean(es) || ta === "blob" : ta === "blob");
      const older = ta === "blob" ? await blob(ea) : null;
      const newer = tb === "blob" && tracked ? await blob(eb) : null;
      if ((older || newer) && (older?.oid !== newer?.oid || older?.mode !== newer?.mode)) {
        found.push({ path, old: older, new: newer });
      }
      return folder ? true : null;
    },
  });
  found.sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : 0));
  return renames ? pairRenames(found) : found;
}

/** Exact renames: a removed file whose content and mode came back under one new name. */
function pairRenames(list) {
  const added = new Map();
  for (const c of list) if (!c.old && c.new && !added.has(c.new.oid)) added.set(c.new.oid, c);
  const out = [];
  const taken = new Set();
  for (const c of list) {
    const to = !c.new && c.old ? added.get(c.old.oid) : undefined;
    if (to && !taken.has(to) && to.new.mode === c.old.mode) {
      taken.add(to);
      out.push({ path: to.path, from: c.path, old: c.old, new: to.new });
    } else if (!taken.has(c)) out.push(c);
  }
  return out.filter((c) => !(taken.has(c) && !c.from)).sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : 0));
}

const normalMode = (mode) => (mode === 0o40000 || mode === 0o120000 || mode === 0o160000 ? mode : mode & 0o111 ? 0o100755 : 0o100644);

const modeText = (mode) => mode.toString(8).padStart(6, "0");

/** A path as git prints one: in quotes with C escapes when it holds a control
 * character, a quote, a backslash or a byte past ASCII (core.quotePath). */
export function quotePath(path) {
  if (![...path].some((c) => c < " " || c === '"' || c === "\\" || c >= "\x7f")) return path;
  let out = "";
  for (const byte of new TextEncoder().encode(path)) {
    const c = String.fromCharCode(byte);
    if (c === '"' || c === "\\") out += `\\${c}`;
    else if (c === "\n") out += "\\n";
    else if (c === "\t") out += "\\t";
    else if (byte < 0x20 || byte >= 0x7f) out += `\\${byte.toString(8).padStart(3, "0")}`;
    else out += c;
  }
  return `"${out}"`;
}

const isBinary = (bytes) => bytes.subarray(0, 8000).includes(0);
const text = (bytes) => new TextDecoder().decode(bytes);

/** A change's content, line counts and hunks (context `context` lines). */
async function compare(change, context) {
  const before = change.old ? await change.old.bytes() : new Uint8Array(0);
  const after = change.new ? await change.new.bytes() : new Uint8Array(0);
  if (isBinary(before) || isBinary(after)) return { binary: true, before, after, hunks: [], added: 0, removed: 0 };
  if (change.old && change.new && change.old.oid === change.new.oid)
    return { binary: false, before, after, hunks: [], added: 0, removed: 0 };
  const oldText = text(before);
  const patch = structuredPatch("a", "b", oldText, text(after), "", "", { context });
  let added = 0;
  let removed = 0;
  for (const hunk of patch.hunks) {
    for (const line of hunk.lines) {
      if (line[0] === "+") added++;
      else if (line[0] === "-") removed++;
    }
  }
  return { binary: false, before, after, hunks: patch.hunks, added, removed, oldLines: oldText.split("\n") };
}

/** git's default function-name context for a hunk: the nearest line above it that
 * starts with a letter, `_` or `$`. */
function funcname(oldLines, start) {
  for (let i = start - 2; i >= 0; i--) {
    const line = oldLines[i] ?? "";
    if (/^[A-Za-z_$]/.test(line)) return ` ${line.slice(0, 80).replace(/\s+$/, "")}`;
  }
  return "";
}

const range = (start, count) => `${count === 0 ? start - 1 : start}${count === 1 ? "" : `,${count}`}`;

/** One change as `git diff` prints it. */
async function patchText(change, { context = 3 } = {}) {
  const from = change.from ?? change.path;
  const lines = [`diff --git ${quotePath(`a/${from}`)} ${quotePath(`b/${change.path}`)}`];
  const { old, new: now } = change;
  if (!old && now) lines.push(`new file mode ${modeText(now.mode)}`, `index ${ZERO}..${short(now.oid)}`);
  else if (old && !now) lines.push(`deleted file mode ${modeText(old.mode)}`, `index ${short(old.oid)}..${ZERO}`);
  else if (old && now) {
    if (old.mode !== now.mode) lines.push(`old mode ${modeText(old.mode)}`, `new mode ${modeText(now.mode)}`);
    if (change.from) lines.push("similarity index 100%", `rename from ${quotePath(change.from)}`, `rename to ${quotePath(change.path)}`);
    if (old.oid !== now.oid)
      lines.push(`index ${short(old.oid)}..${short(now.oid)}${old.mode === now.mode ? ` ${modeText(now.mode)}` : ""}`);
  }
  const c = await compare(change, context);
  const a = old ? quotePath(`a/${from}`) : "/dev/null";
  const b = now ? quotePath(`b/${change.path}`) : "/dev/null";
  if (c.binary) {
    if (old?.oid !== now?.oid) lines.push(`Binary files ${a} and ${b} differ`);
  } else if (c.hunks.length > 0) {
    lines.push(`--- ${a}`, `+++ ${b}`);
    for (const h of c.hunks) {
      lines.push(`@@ -${range(h.oldStart, h.oldLines)} +${range(h.newStart, h.newLines)} @@${funcname(c.oldLines ?? [], h.oldStart)}`);
      lines.push(...h.lines);
    }
  }
  return `${lines.join("\n")}\n`;
}

/** Lines added and removed by each change (binary: null). */
export async function counts(list) {
  const out = [];
  for (const change of list) {
    const c = await compare(change, 0);
    out.push({ change, binary: c.binary, added: c.added, removed: c.removed, sizes: [c.before.length, c.after.length] });
  }
  return out;
}

/** A rename's name in a stat: "dir/{a => b}.txt", or "a => b". */
function statName(change) {
  if (!change.from) return quotePath(change.path);
  const a = change.from;
  const b = change.path;
  let pre = 0;
  for (let i = 0; i < Math.min(a.length, b.length) && a[i] === b[i]; i++) if (a[i] === "/") pre = i + 1;
  let suf = 0;
  for (let i = 1; i <= Math.min(a.length, b.length) - pre && a[a.length - i] === b[b.length - i]; i++) if (a[a.length - i] === "/") suf = i;
  if (pre === 0 && suf === 0) return `${a} => ${b}`;
  return `${a.slice(0, pre)}{${a.slice(pre, a.length - suf)} => ${b.slice(pre, b.length - suf)}}${a.slice(a.length - suf)}`;
}

/** The summary line: " 2 files changed, 3 insertions(+), 1 deletion(-)". */
export function summary(rows) {
  if (rows.length === 0) return " 0 files changed\n";
  const added = rows.reduce((n, r) => n + r.added, 0);
  const removed = rows.reduce((n, r) => n + r.removed, 0);
  let line = ` ${plural(rows.length, "file")} changed`;
  if (added || !removed) line += `, ${plural(added, "insertion")}(+)`;
  if (removed || !added) line += `, ${plural(removed, "deletion")}(-)`;
  return `${line}\n`;
}

/** `--stat` as git prints it without a terminal (80 columns). */
export function statText(rows) {
  if (rows.length === 0) return "";
  const width = 80;
  const names = rows.map((r) => statName(r.change));
  const maxChange = Math.max(0, ...rows.map((r) => (r.binary ? 0 : r.added + r.removed)));
  const binWidth = rows.some((r) => r.binary) ? 3 : 0;
  const numberWidth = Math.max(String(maxChange).length, binWidth);
  let nameWidth = Math.max(...names.map((n) => n.length));
  let graphWidth = maxChange;
  if (nameWidth + numberWidth + 6 + graphWidth > width) {
    if (graphWidth > Math.floor((width * 3) / 8) - numberWidth - 6) graphWidth = Math.max(6, Math.floor((width * 3) / 8) - numberWidth - 6);
    if (nameWidth > width - numberWidth - 6 - graphWidth) nameWidth = width - numberWidth - 6 - graphWidth;
    else graphWidth = width - numberWidth - 6 - nameWidth;
  }
  const scale = (n) => (graphWidth >= maxChange || n === 0 ? n : 1 + Math.floor((n * (graphWidth - 1)) / maxChange));
  const lines = rows.map((r, i) => {
    let name = names[i];
    if (name.length > nameWidth) name = `...${name.slice(name.length - nameWidth + 3)}`;
    if (r.binary) return ` ${name.padEnd(nameWidth)} | ${"Bin".padStart(numberWidth)} ${r.sizes[0]} -> ${r.sizes[1]} bytes`;
    const total = r.added + r.removed;
    const graph = total === 0 ? "" : ` ${"+".repeat(scale(r.added))}${"-".repeat(scale(r.removed))}`;
    return ` ${name.padEnd(nameWidth)} | ${String(total).padStart(numberWidth)}${graph}`;
  });
  return `${lines.join("\n")}\n${summary(rows)}`;
}

/** The create/delete/mode lines a commit or merge prints after its summary. */
export function modeLines(list) {
  const lines = [];
  for (const c of list) {
    if (c.from) lines.push(` rename ${statName(c)} (100%)`);
    else if (!c.old && c.new) lines.push(` create mode ${modeText(c.new.mode)} ${quotePath(c.path)}`);
    else if (c.old && !c.new) lines.push(` delete mode ${modeText(c.old.mode)} ${quotePath(c.path)}`);
    else if (c.old && c.new && c.old.mode !== c.new.mode)
      lines.push(` mode change ${modeText(c.old.mode)} => ${modeText(c.new.mode)} ${quotePath(c.path)}`);
  }
  return lines.map((l) => `${l}\n`).join("");
}

/** How a list of changes is shown under the given output flags (diff, log, show). */
export async function showChanges(list, flags, shown = quotePath) {
  if (flags.nameOnly) return list.map((c) => `${shown(c.path)}\n`).join("");
  if (flags.nameStatus) {
    return list
      .map((c) => (c.from ? `R100\t${shown(c.from)}\t${shown(c.path)}\n` : `${!c.old ? "A" : !c.new ? "D" : "M"}\t${shown(c.path)}\n`))
      .join("");
  }
  if (flags.numstat) {
    return (await counts(list)).map((r) => `${r.binary ? "-\t-" : `${r.added}\t${r.removed}`}\t${statName(r.change)}\n`).join("");
  }
  let out = "";
  if (flags.stat) out += statText(await counts(list));
  if (flags.shortstat) out += list.length ? summary(await counts(list)) : "";
  if (flags.patch) {
    if (flags.stat && list.length > 0) out += "\n";
    for (const c of list) out += await patchText(c, { context: flags.unified === undefined ? 3 : Number(flags.unified) });
  }
  return out;
}

const DIFF_FLAGS = {
  cached: "cached",
  staged: "cached",
  stat: "stat",
  shortstat: "shortstat",
  numstat: "numstat",
  "name-only": "nameOnly",
  "name-status": "nameStatus",
  U: "unified=",
  unified: "unified=",
  p: "patch",
  patch: "patch",
  u: "patch",
  "no-color": "noColor",
  color: "color=",
  quiet: "quiet",
  "exit-code": "exitCode",
  "no-renames": "noRenames",
  M: "renames",
  "find-renames": "renames",
  w: "ignoreSpace",
  "ignore-all-space": "ignoreSpace",
  "word-diff": "wordDiff",
  R: "reverse",
};

/** `git diff`: the working tree against the index; `--cached` the index against a
 * commit; one commit against the working tree; two commits (`A B`, `A..B`); paths. */
export async function diff(g, args) {
  const { flags, rest, paths } = parseArgs("diff", args, DIFF_FLAGS);
  if (flags.ignoreSpace || flags.wordDiff || flags.reverse)
    throw unsupported(`diff ${flags.ignoreSpace ? "-w" : flags.wordDiff ? "--word-diff" : "-R"}`);
  if (flags.color && flags.color !== "never") throw unsupported(`diff --color=${flags.color}`);
  const revs = [];
  const specs = (paths ?? []).map((p) => g.inRepo(p));
  for (const arg of rest) {
    if (paths === null && !(await g.isRevision(arg))) {
      const exists = await g.fs.lstat(`${g.cwd}/${arg}`).then(
        () => true,
        () => false,
      );
      if (!exists) {
        throw new GitError(
          `fatal: ambiguous argument '${arg}': unknown revision or path not in the working tree.\nUse '--' to separate paths from revisions, like this:\n'git <command> [<revision>...] -- [<file>...]'\n`,
        );
      }
      specs.push(g.inRepo(arg));
    } else if (arg.includes("..")) {
      if (arg.includes("...")) throw unsupported(`diff ${arg}`);
      const [x, y] = arg.split("..");
      revs.push(x || "HEAD", y || "HEAD");
    } else revs.push(arg);
  }
  const tree = async (rev) => ({ kind: "tree", oid: await g.resolve(rev) });
  let a;
  let b;
  if (revs.length > 2) throw unsupported("diff of more than two revisions");
  if (flags.cached) {
    const head = await g.head();
    a = revs[0] ? await tree(revs[0]) : head ? { kind: "tree", oid: head } : { kind: "none" };
    b = { kind: "index" };
  } else if (revs.length === 2) [a, b] = [await tree(revs[0]), await tree(revs[1])];
  else if (revs.length === 1) [a, b] = [await tree(revs[0]), { kind: "workdir" }];
  else [a, b] = [{ kind: "index" }, { kind: "workdir" }];
  const list = await changes(g, /** @type {Side} */ (a), /** @type {Side} */ (b), specs, {
    renames: !flags.noRenames && b.kind !== "workdir",
  });
  const shown = flags.stat || flags.shortstat || flags.numstat || flags.nameOnly || flags.nameStatus;
  if (!flags.quiet) g.print(await showChanges(list, { ...flags, patch: flags.patch || !shown }, (p) => quotePath(p)));
  if ((flags.exitCode || flags.quiet) && list.length > 0) throw new GitError("", 1);
}
