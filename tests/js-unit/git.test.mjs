// The shell's git (shell/git/) against the host's own git (Debian's package): the same
// steps in two folders, each step's output compared, the commits' ids compared (the
// same id is the same bytes), our repository passing `git fsck --strict`, and a
// repository made by the host's git read by ours. Differences that are deliberate are
// listed in DELIBERATE with the reason.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, test } from "node:test";
import { runGit } from "../../shell/git/git.mjs";
import { nodeGitFs } from "./git-node-fs.mjs";

const root = mkdtempSync(join(tmpdir(), "pyharness-git-"));
after(() => rmSync(root, { recursive: true, force: true }));

const home = join(root, "home");
mkdirSync(home);
writeFileSync(join(home, ".gitconfig"), "[init]\n\tdefaultBranch = main\n[advice]\n\tdetachedHead = true\n");
const ENV = {
  HOME: home,
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_AUTHOR_NAME: "A U Thor",
  GIT_AUTHOR_EMAIL: "author@example.com",
  GIT_COMMITTER_NAME: "C O Mitter",
  GIT_COMMITTER_EMAIL: "committer@example.com",
  GIT_AUTHOR_DATE: "@1700000000 +0100",
  GIT_COMMITTER_DATE: "@1700000000 +0100",
  TZ: "UTC",
  LANG: "C",
};
const IDENTITY = { name: "pyharness", email: "agent@pyharness.invalid" };

function host(dir, args, env = {}) {
  try {
    const stdout = execFileSync("git", args, {
      cwd: dir,
      env: { ...ENV, ...env, PATH: process.env.PATH },
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    });
    return { stdout, exitCode: 0 };
  } catch (err) {
    return { stdout: err.stdout ?? "", stderr: err.stderr ?? "", exitCode: err.status };
  }
}

async function ours(dir, args, env = {}) {
  return runGit(args, { fs: nodeGitFs(), cwd: dir, env: { ...ENV, ...env }, identity: IDENTITY });
}

/** A new folder `name` holding `files`, made a repository by this git, everything added. */
async function ourRepo(name, files) {
  const dir = join(root, name);
  mkdirSync(dir);
  write(dir, files);
  await ours(dir, ["init", "-q"]);
  await ours(dir, ["add", "-A"]);
  return dir;
}

function write(dir, files) {
  for (const [path, content] of Object.entries(files)) {
    const full = join(dir, path);
    if (content === null) rmSync(full, { force: true });
    else {
      mkdirSync(dirname(full), { recursive: true });
      writeFileSync(full, content);
    }
  }
}

// A step: files to write first (null removes), the git arguments, and the time.
const lines = (n, change = -1) => `${Array.from({ length: n }, (_, i) => (i === change ? `changed line ${i}` : `line ${i}`)).join("\n")}\n`;
const STEPS = [
  { args: ["init"] },
  { args: ["status"] },
  {
    files: { "README.md": "# demo\n", "src/app.js": "function main() {\n  return 1;\n}\n", "src/lib/util.js": lines(20) },
    args: ["status"],
  },
  { args: ["status", "--short"] },
  { args: ["add", "README.md"] },
  { args: ["status"] },
  { args: ["status", "--porcelain"] },
  { args: ["add", "-A"] },
  { args: ["commit", "-m", "first commit"] },
  { args: ["status"] },
  { args: ["log"] },
  { files: { "src/lib/util.js": lines(20, 10), "notes.txt": "notes\n" }, args: ["status"] },
  { args: ["status", "-s"] },
  { args: ["diff"] },
  { args: ["diff", "--stat"] },
  { args: ["add", "."] },
  { args: ["diff", "--cached"] },
  { args: ["diff", "--cached", "--name-only"] },
  { args: ["diff", "--cached", "--name-status"] },
  { args: ["commit", "-m", "second: change util", "-m", "with a body"] },
  { args: ["log", "--oneline"] },
  { args: ["log", "--stat"] },
  { args: ["log", "-n", "1", "-p"] },
  { args: ["show"] },
  { args: ["show", "--stat", "HEAD~1"] },
  { args: ["show", "HEAD:README.md"] },
  { args: ["diff", "HEAD~1", "HEAD"] },
  { args: ["diff", "HEAD~1..HEAD", "--", "src"] },
  { args: ["rev-parse", "HEAD"] },
  { args: ["rev-parse", "--short", "HEAD~1"] },
  { args: ["rev-parse", "--abbrev-ref", "HEAD"] },
  { args: ["branch", "feature"] },
  { args: ["branch"] },
  { args: ["switch", "feature"] },
  { files: { "feature.txt": "a feature\n", "README.md": "# demo\n\nmore words\n" }, args: ["commit", "-a", "-m", "readme on feature"] },
  { args: ["add", "feature.txt"] },
  { args: ["commit", "-m", "add feature"] },
  { args: ["checkout", "main"] },
  { files: { "src/app.js": "function main() {\n  return 2;\n}\n" }, args: ["commit", "-am", "main changes app"] },
  { args: ["merge", "feature", "-m", "Merge branch 'feature'"] },
  { args: ["log", "--oneline", "--decorate"] },
  { args: ["log", "--format=%h %an <%ae> %s"] },
  { args: ["tag", "v1.0"] },
  { args: ["tag", "-a", "v1.1", "-m", "release 1.1"] },
  { args: ["tag"] },
  { args: ["show", "v1.1", "--stat"] },
  { args: ["checkout", "-b", "topic"] },
  { files: { "src/app.js": "function main() {\n  return 3;\n}\n" }, args: ["commit", "-am", "topic changes app"] },
  { args: ["checkout", "main"] },
  { files: { "src/app.js": "function main() {\n  return 4;\n}\n" }, args: ["commit", "-am", "main changes app again"] },
  { args: ["merge", "topic"] },
  { args: ["status"] },
  { files: { "src/app.js": "function main() {\n  return 34;\n}\n" }, args: ["add", "src/app.js"] },
  { args: ["commit", "-m", "merge topic, resolved"] },
  { args: ["log", "--oneline", "-n", "3"] },
  { files: { "notes.txt": "notes, edited\n" }, args: ["stash"] },
  { args: ["status", "--short"] },
  { args: ["stash", "list"] },
  { args: ["stash", "pop"] },
  { args: ["reset", "--hard"] },
  { args: ["rm", "notes.txt"] },
  { args: ["mv", "feature.txt", "docs.txt"] },
  { args: ["status"] },
  { args: ["status", "--short"] },
  { args: ["commit", "-m", "tidy"] },
  { args: ["reset", "--soft", "HEAD~1"] },
  { args: ["status", "--short"] },
  { args: ["reset", "HEAD~1"] },
  { args: ["status", "--short"] },
  { args: ["restore", "."] },
  { args: ["status"] },
  { args: ["commit", "--amend", "-m", "merge topic (amended)"] },
  { args: ["log", "--oneline", "--all"] },
  { args: ["branch", "-d", "topic"] },
  { args: ["config", "user.name", "Configured Name"] },
  { args: ["config", "user.name"] },
  { args: ["rebase", "-i", "HEAD~2"], ours: { exitCode: 129, stderr: /git: 'rebase' is not supported here/ } },
  // More of each subcommand's flags, on the same repository.
  { files: { "src/app.js": "function main() {\n  return 5;\n}\n", "extra.txt": "extra\n" }, args: ["diff", "--numstat"] },
  { args: ["diff", "--shortstat"] },
  { args: ["diff", "--name-status"] },
  { args: ["diff", "--exit-code"] },
  { args: ["add", "-u"] },
  { args: ["status", "-s", "-b"] },
  { args: ["restore", "--staged", "src/app.js"] },
  { args: ["status", "--short"] },
  { args: ["checkout", "--", "src/app.js"] },
  { args: ["status", "--short"] },
  { args: ["add", "extra.txt"] },
  { args: ["rm", "--cached", "extra.txt"] },
  { args: ["status", "--short"] },
  { args: ["switch", "-c", "renamer"] },
  { args: ["mv", "src/lib", "src/library"] },
  { args: ["commit", "-qm", "move lib"] },
  { args: ["show", "--stat"] },
  { args: ["show", "--name-status"] },
  { args: ["log", "--oneline", "--", "src/library"] },
  { args: ["log", "--format=%s%n%b", "-n", "2"] },
  { args: ["log", "--pretty=oneline", "-n", "2"] },
  { args: ["log", "-3", "--no-merges", "--oneline"] },
  { args: ["branch", "-m", "renamed"] },
  { args: ["branch", "-v"] },
  { args: ["switch", "main"] },
  { args: ["merge", "--ff-only", "renamed"] },
  { args: ["branch", "-d", "renamed"] },
  { args: ["tag", "-d", "v1.0"] },
  { args: ["tag", "-l", "v1*"] },
  { args: ["reset", "--hard", "HEAD~1"] },
  { args: ["rev-parse", "HEAD~1^2", "HEAD^{commit}"] },
  { args: ["rev-parse", "--show-toplevel"] },
  { args: ["checkout", "HEAD~1"] },
  { args: ["status"] },
  { args: ["branch"] },
  { args: ["switch", "main"] },
  { args: ["show", "HEAD~1:src/app.js"] },
  { args: ["diff", "HEAD~2", "--", "README.md"] },
  { args: ["config", "--global", "user.email", "global@example.com"] },
  { args: ["config", "--global", "user.email"] },
  { args: ["commit", "--allow-empty", "-m", "empty"] },
  { args: ["log", "-n", "1", "--format=%an <%ae> / %cn <%ce>"] },
];

// Where our output differs from git's on purpose, and why.
const DELIBERATE = {};
// Output that differs in one part for a reason, made the same before comparing.
const NORMALIZE = [
  // isomorphic-git's stash commit takes the time of day, not GIT_COMMITTER_DATE: its id differs.
  [/Dropped refs\/stash@\{(\d+)\} \([0-9a-f]{40}\)/g, "Dropped refs/stash@{$1} (<stash>)"],
];

test("git steps print what the host's git prints, and make the same commits", async () => {
  const a = join(root, "host");
  const b = join(root, "ours");
  mkdirSync(a);
  mkdirSync(b);
  const mismatches = [];
  for (const step of STEPS) {
    if (step.files) {
      write(a, step.files);
      write(b, step.files);
    }
    const want = host(a, step.args);
    const got = await ours(b, step.args);
    const name = step.args.join(" ");
    if (step.ours) {
      assert.equal(got.exitCode, step.ours.exitCode, name);
      assert.match(got.stderr, step.ours.stderr, name);
      continue;
    }
    const same = (x) => NORMALIZE.reduce((t, [from, to]) => t.replace(from, to), x.replaceAll(a, "<dir>").replaceAll(b, "<dir>"));
    if (same(want.stdout) !== same(got.stdout) || want.exitCode !== got.exitCode) {
      if (!(name in DELIBERATE))
        mismatches.push(
          `$ git ${name}\n--- host (exit ${want.exitCode})\n${want.stdout}${want.stderr ?? ""}--- ours (exit ${got.exitCode})\n${got.stdout}${got.stderr}`,
        );
    }
    const headA = host(a, ["rev-parse", "HEAD"]).stdout;
    const headB = host(b, ["rev-parse", "HEAD"]).stdout;
    if (headA !== headB) mismatches.push(`after git ${name}: HEAD ${headA.trim()} (host) != ${headB.trim()} (ours)`);
  }
  assert.deepEqual(mismatches, []);
  assert.equal(host(b, ["fsck", "--strict"]).exitCode, 0, "git fsck --strict on our repository");
  for (const args of [
    ["log", "--all", "--graph", "--oneline"],
    ["status", "--short"],
    ["diff", "HEAD~2"],
  ]) {
    assert.equal(host(b, args).stdout.replaceAll(b, "<dir>"), host(a, args).stdout.replaceAll(a, "<dir>"), args.join(" "));
  }
});

test("a repository the host's git made (branches, packed refs, a packfile, an annotated tag) reads the same", async () => {
  const dir = join(root, "made-by-git");
  mkdirSync(dir);
  const run = (...args) => assert.equal(host(dir, args).exitCode, 0, args.join(" "));
  run("init");
  write(dir, { "a.txt": lines(30), "lib/b.py": "def f():\n    return 1\n" });
  run("add", "-A");
  run("commit", "-m", "one");
  run("switch", "-c", "side");
  write(dir, { "lib/b.py": "def f():\n    return 2\n", "c.md": "see\n" });
  run("add", "-A");
  run("commit", "-m", "two on side");
  run("switch", "main");
  write(dir, { "a.txt": lines(30, 15) });
  run("commit", "-am", "three on main");
  run("merge", "--no-edit", "side");
  run("tag", "-a", "v2", "-m", "version two");
  run("tag", "light", "HEAD~1");
  run("gc", "--quiet");
  assert.equal(host(dir, ["count-objects", "-v"]).stdout.match(/^count: (\d+)/m)?.[1], "0", "every object is in a pack");
  write(dir, { "a.txt": lines(30, 3), "new.txt": "untracked\n" });
  run("add", "new.txt");
  write(dir, { "new.txt": "untracked, then changed\n" });
  for (const args of [
    ["log"],
    ["log", "--oneline", "--all", "--decorate"],
    ["log", "--stat", "-n", "2"],
    ["status"],
    ["status", "--short", "--branch"],
    ["diff"],
    ["diff", "--cached"],
    ["diff", "HEAD~1", "--stat"],
    ["show", "v2"],
    ["show", "HEAD~1"],
    ["branch", "-v"],
    ["tag"],
    ["rev-parse", "v2", "light", "HEAD^2"],
    ["log", "--format=%H %P %s", "--", "lib"],
  ]) {
    const want = host(dir, args);
    const got = await ours(dir, args);
    assert.equal(got.stdout, want.stdout, `git ${args.join(" ")}`);
    assert.equal(got.exitCode, want.exitCode, `git ${args.join(" ")}: exit`);
  }
});

test("what this git does not do it says, and changes nothing", async () => {
  const dir = await ourRepo("refusals", { "a.txt": "a\n" });
  await ours(dir, ["commit", "-qm", "a"]);
  const before = host(dir, ["rev-parse", "HEAD"]).stdout;
  for (const [args, said] of [
    [["rebase", "-i", "HEAD~1"], "git: 'rebase' is not supported here"],
    [["cherry-pick", "HEAD"], "git: 'cherry-pick' is not supported here"],
    [["log", "--graph"], "git: 'log --graph' is not supported here"],
    [["add", "-p"], "git: 'add -p' is not supported here"],
    [["commit"], "git: commit without -m is not supported here"],
    [["push", "origin", "main"], "git: 'push' is not supported here"],
    [["clone", "https://example.com/x.git"], "git: 'clone' is not supported here"],
  ]) {
    const r = await ours(dir, args);
    assert.equal(r.exitCode, 129, args.join(" "));
    assert.ok(r.stderr.startsWith(said), `${args.join(" ")}: ${r.stderr}`);
  }
  assert.equal(host(dir, ["rev-parse", "HEAD"]).stdout, before);
  assert.equal(host(dir, ["status", "--porcelain"]).stdout, "");
  const outside = await ours(join(root, "home"), ["status"]);
  assert.equal(outside.exitCode, 128);
  assert.equal(outside.stderr, "fatal: not a git repository (or any of the parent directories): .git\n");
});

/** A tree object (git's binary format) from entries [mode, name, oid], written by the host's git. */
function tree(dir, entries) {
  const parts = entries.map(([mode, name, oid]) => Buffer.concat([Buffer.from(`${mode} ${name}\0`, "utf8"), Buffer.from(oid, "hex")]));
  return execFileSync("git", ["hash-object", "-t", "tree", "--literally", "-w", "--stdin"], {
    cwd: dir,
    input: Buffer.concat(parts),
    env: { ...ENV, PATH: process.env.PATH },
  })
    .toString()
    .trim();
}

test("a hostile repository is refused whole: escaping names, .git, symlinks, submodules, deep trees, a broken pack", async () => {
  const dir = join(root, "hostile");
  mkdirSync(dir);
  const run = (...args) => host(dir, args).stdout.trim();
  run("init", "-q");
  write(dir, { "ok.txt": "fine\n" });
  run("add", "ok.txt");
  run("commit", "-qm", "base");
  const blob = run("hash-object", "-w", "ok.txt");
  const evil = run("hash-object", "-w", "--stdin");
  const inner = tree(dir, [["100644", "hooks-post-checkout", blob]]);
  let deep = tree(dir, [["100644", "leaf", blob]]);
  for (let i = 0; i < 205; i++) deep = tree(dir, [["40000", "d", deep]]);
  const cases = [
    ["..", [["40000", "..", tree(dir, [["100644", "escaped.txt", blob]])]], "'\"..\"': it is not a file name"],
    [".git", [["40000", ".git", inner]], "'\".git\"': it is git's own folder"],
    [".GIT", [["40000", ".GIT", inner]], "'\".GIT\"': it is git's own folder"],
    [".git inside", [["40000", "sub", tree(dir, [["40000", ".Git", inner]])]], "'\"sub/.Git\"': it is git's own folder"],
    ["symlink", [["120000", "link", run("hash-object", "-w", "--stdin")]], "'link': it is a symbolic link"],
    ["submodule", [["160000", "mod", blob]], "'mod': it is a submodule"],
    ["deep", [["40000", "d", deep]], "folders deep"],
  ];
  for (const [name, entries, said] of cases) {
    const commit = execFileSync("git", ["commit-tree", tree(dir, [["100644", "ok.txt", blob], ...entries]), "-p", "HEAD", "-m", name], {
      cwd: dir,
      env: { ...ENV, PATH: process.env.PATH },
    })
      .toString()
      .trim();
    for (const args of [
      ["checkout", commit],
      ["reset", "--hard", commit],
      ["merge", commit],
      ["restore", "--source", commit, "."],
    ]) {
      const r = await ours(dir, args);
      assert.equal(r.exitCode, 128, `${name}: git ${args[0]}: ${r.stderr}`);
      assert.ok(r.stderr.includes(said), `${name}: git ${args[0]}: ${r.stderr}`);
      assert.ok(r.stderr.includes("nothing was changed"), r.stderr);
      assert.equal(host(dir, ["status", "--porcelain"]).stdout, "", `${name}: git ${args[0]} changed nothing`);
      assert.equal(run("rev-parse", "--abbrev-ref", "HEAD"), "main");
    }
  }
  assert.equal(evil.length, 40);
  assert.deepEqual(readdirSync(root).sort(), ["home", "hostile", "made-by-git", "ours", "host", "refusals"].sort());
  // A broken packfile: every command that reads it fails in git's words; the worker survives.
  run("gc", "-q");
  const packs = join(dir, ".git", "objects", "pack");
  const pack = readdirSync(packs).find((f) => f.endsWith(".pack"));
  const bytes = readFileSync(join(packs, pack));
  bytes.fill(0xff, 40, bytes.length - 30);
  writeFileSync(join(packs, pack), bytes);
  for (const args of [["log"], ["show"], ["status"]]) {
    const r = await ours(dir, args);
    assert.equal(r.exitCode, 128, `${args}: ${r.stdout}${r.stderr}`);
    assert.match(r.stderr, /^fatal: /);
  }
});

test("reading commands write nothing: not even the index's file times", async () => {
  const dir = await ourRepo("read-only", { "a.txt": "a\n", "b/c.txt": "c\n" });
  await ours(dir, ["commit", "-qm", "one"]);
  const index = readFileSync(join(dir, ".git", "index"));
  const later = new Date(Date.now() + 60_000);
  for (const path of ["a.txt", "b/c.txt"]) utimesSync(join(dir, path), later, later);
  write(dir, { "a.txt": "changed\n" });
  for (const args of [["status"], ["status", "--short"], ["diff"], ["diff", "--stat"], ["log", "--stat"], ["show"]]) {
    const r = await ours(dir, args);
    assert.equal(r.exitCode, 0, `${args.join(" ")}: ${r.stderr}`);
  }
  assert.deepEqual(readFileSync(join(dir, ".git", "index")), index);
});

test("an identity with line breaks or angle brackets cannot forge a commit's header lines", async () => {
  const dir = await ourRepo("identity", { "a.txt": "a\n" });
  const forged = `Eve\nparent ${"0".repeat(40)}\ncommitter Mallory <m@x> 1 +0000`;
  let r = await ours(dir, ["commit", "-qm", "one"], { GIT_AUTHOR_NAME: forged, GIT_AUTHOR_EMAIL: "eve@x>\n" });
  assert.equal(r.exitCode, 0, r.stderr);
  write(dir, { "a.txt": "b\n" });
  r = await ours(dir, ["commit", "-qam", "two", "--author", "Eve\r\nencoding evil <eve@x>"]);
  assert.equal(r.exitCode, 128); // not 'Name <email>': refused, nothing committed
  assert.match(r.stderr, /is not 'Name <email>'/);
  r = await ours(dir, ["commit", "-qam", "two", "--author", "Eve <eve@x> <more>"]);
  assert.equal(r.exitCode, 0, r.stderr);
  write(dir, { "msg.txt": "three\0hidden\n", "a.txt": "c\n" });
  r = await ours(dir, ["commit", "-qa", "-F", "msg.txt"]);
  assert.equal(r.exitCode, 1);
  assert.equal(r.stderr, "error: a NUL byte in commit log message not allowed.\n");
  assert.equal(host(dir, ["diff", "--cached", "--name-only"]).stdout, ""); // nothing staged by -a
  assert.equal(host(dir, ["fsck", "--strict"]).exitCode, 0);
  assert.equal(host(dir, ["log", "--format=%an|%ae|%P"]).stdout.split("\n").filter(Boolean).length, 2);
  assert.equal(host(dir, ["rev-list", "--count", "HEAD"]).stdout.trim(), "2"); // no forged parent
  const names = host(dir, ["log", "--format=%an|%ae"]).stdout.trim().split("\n");
  assert.deepEqual(names, ["Eve|eve@x more", `Eveparent ${"0".repeat(40)}committer Mallory m@x 1 +0000|eve@x`]);
});
