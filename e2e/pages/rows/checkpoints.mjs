// The page code of e2e/test_checkpoints.py, on e2e/pages/index.html: runs change files
// every way (built-in tools, a shell command, python3), then h.diff, h.revert (a dry run,
// a conflict, a cascade, a redo) and a reopened workspace's checkpoints.

/** The page's helpers (index.html): boot with the scripted model; sha256 of bytes. */
const { boot, sha256, settle } = window;

const call = (name, args) => ({ toolCalls: [{ name, arguments: args }] });
const bash = (command) => call("bash", { command });

/** Everything in /work: path → [type, mode, sha256 of a file's bytes]. */
async function tree(h, dir = ".") {
  const out = {};
  for (const { name, type } of await h.fs.readdir(dir)) {
    const path = dir === "." ? name : `${dir}/${name}`;
    const { mode } = await h.fs.stat(path);
    if (type === "dir") {
      out[`${path}/`] = ["dir", mode];
      Object.assign(out, await tree(h, path));
    } else out[path] = ["file", mode, await sha256(await h.fs.readFile(path))];
  }
  return out;
}

/** What h.subscribe hears of file changes, from now on. */
function listen(h) {
  const heard = [];
  h.subscribe((e) => {
    if (e.type === "file_change") heard.push({ path: e.path, kind: e.kind, tool: e.tool, callId: e.callId, runId: e.runId });
  });
  return heard;
}

async function seed(h) {
  await h.fs.writeFile("keep.txt", "kept\n");
  await h.fs.mkdir("src", { recursive: true });
  await h.fs.writeFile("src/a.py", "print('a')\n");
  await h.fs.writeFile(
    "data.bin",
    Uint8Array.from({ length: 256 }, (_, i) => i),
  );
}

/** One run changes files every way; diff it, dry-run its revert, revert it, redo it. */
export async function revertEveryKind() {
  const h = await boot({
    shell: true,
    model: {
      api: "scripted",
      turns: [
        call("read", { path: "src/a.py" }),
        call("edit", { path: "src/a.py", edits: [{ oldText: "'a'", newText: "'edited'" }] }),
        call("write", { path: "notes/new.md", content: "# new\n" }),
        bash("rm keep.txt && mkdir -p out/empty && mv src/a.py src/b.py"),
        bash("python3 -c \"open('data.bin','wb').write(bytes(range(256))[::-1])\""),
        { text: "done" },
      ],
    },
  });
  await seed(h);
  const before = await tree(h);
  const run = h.prompt("change everything");
  await run.done;
  const after = await tree(h);
  const diff = await run.diff();
  const dry = await h.revert(run.id, { dryRun: true });
  const afterDry = await tree(h);
  const heard = listen(h);
  const reverted = await run.revert();
  const back = await tree(h);
  const again = await settle(h.revert(run.id));
  const redone = await h.revert(reverted.revertId);
  const redoneTree = await tree(h);
  const listing = await h.checkpoints();
  h.close();
  return { runId: run.id, before, after, diff, dry, afterDry, reverted, back, heard, again, redone, redoneTree, listing };
}

/** Two runs write the same file and the page writes another: ECONFLICT, then a cascade. */
export async function conflictAndCascade() {
  const h = await boot({
    model: {
      api: "scripted",
      turns: [
        call("write", { path: "a.txt", content: "first\n" }),
        { text: "one" },
        call("write", { path: "a.txt", content: "second\n" }),
        { text: "two" },
        call("write", { path: "b.txt", content: "run three\n" }),
        { text: "three" },
      ],
    },
  });
  const first = h.prompt("1");
  await first.done;
  const second = h.prompt("2");
  await second.done;
  const third = h.prompt("3");
  await third.done;
  await h.fs.writeFile("b.txt", "the user's own edit\n");
  const conflict = await settle(h.revert(first.id));
  const pageConflict = await settle(h.revert(third.id, { cascade: true }));
  const untouched = await h.fs.readFile("a.txt", "utf8");
  const cascade = await h.revert(first.id, { cascade: true });
  const exists = await settle(h.fs.stat("a.txt"));
  const b = await h.fs.readFile("b.txt", "utf8");
  h.close();
  return { ids: [first.id, second.id, third.id], conflict, pageConflict, untouched, cascade, aExists: exists.ok, b };
}

/** A run's checkpoint is kept with a stored workspace: a new harness over it reverts. */
export async function revertAfterReopen(name) {
  const h = await boot({ workspace: name });
  await h.fs.writeFile("kept.txt", "the page's\n");
  await h.fs.writeFile("gone.txt", "deleted by the run\n");
  h.close();
  const h2 = await boot({
    workspace: name,
    readBeforeWrite: false,
    shell: true,
    model: {
      api: "scripted",
      turns: [call("write", { path: "kept.txt", content: "by the run\n" }), bash("rm gone.txt"), { text: "done" }],
    },
  });
  const run = h2.prompt("change");
  await run.done;
  const storage = h2.storage.kind;
  h2.close();
  const h3 = await boot({ workspace: name });
  const listing = await h3.checkpoints();
  const result = await h3.revert(run.id);
  const out = {
    storage,
    listed: listing.map((c) => c.runId),
    runId: run.id,
    reverted: result.reverted,
    kept: await h3.fs.readFile("kept.txt", "utf8"),
    gone: await h3.fs.readFile("gone.txt", "utf8"),
  };
  h3.close();
  return out;
}

/** Two runs, a rewind to the second, a third prompt (`model`: the scripted provider on
 * loopback, so the test reads the requests the model got). */
export async function rewindCutsTheThread(model) {
  const h = await boot({ model });
  await h.prompt("first prompt").done;
  const second = h.prompt("second prompt");
  await second.done;
  const before = { a: await h.fs.readFile("a.txt", "utf8"), b: (await settle(h.fs.stat("b.txt"))).ok };
  const rewound = await h.threads.rewind(second.id);
  const after = { a: await h.fs.readFile("a.txt", "utf8"), b: (await settle(h.fs.stat("b.txt"))).ok };
  const transcript = (await h.threads.transcript()).events.filter((e) => e.type === "run_start").map((e) => e.prompt);
  const third = await h.prompt("third prompt").done;
  const again = await settle(h.threads.rewind(second.id));
  h.close();
  return { secondId: second.id, before, rewound, after, transcript, third: third.text, again };
}

/** A page tool whose handler is the user at the page while the run waits on it: its
 * changes go through the harness's own h.fs (the page's, not the call's `fs`). */
function userAtThePage(harness, edits) {
  return {
    name: "ask_user",
    description: "Wait for the user",
    parameters: { type: "object", properties: {} },
    run: async () => {
      for (const [path, text] of edits) {
        if (path.includes("/")) await harness.h.fs.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
        await harness.h.fs.writeFile(path, text);
      }
      return "the user answered";
    },
  };
}

/** The page edits, during a run, what the run had touched (a file it wrote, a folder it
 * made, a file it deleted): every revert (plain, cascade, dry run) is ECONFLICT, nothing
 * changes, the user's edits stay; force reverts and its own revert brings them back. */
export async function pageEditsDuringARun() {
  const harness = {};
  const h = await boot({
    shell: true,
    readBeforeWrite: false,
    tools: [
      userAtThePage(harness, [
        ["notes.txt", "the user's edit\n"],
        ["out/mine.txt", "the user's file in the run's folder\n"],
        ["old.txt", "the user brought it back\n"],
      ]),
    ],
    model: {
      api: "scripted",
      turns: [
        call("write", { path: "notes.txt", content: "by the run\n" }),
        bash("mkdir -p out && echo r > out/r.txt && rm old.txt"),
        call("ask_user", {}),
        call("write", { path: "other.txt", content: "only the run's\n" }),
        { text: "done" },
      ],
    },
  });
  harness.h = h;
  await h.fs.writeFile("notes.txt", "before the run\n");
  await h.fs.writeFile("old.txt", "old\n");
  const run = h.prompt("go");
  await run.done;
  const after = await tree(h);
  const refused = [await settle(run.revert()), await settle(run.revert({ cascade: true })), await settle(run.revert({ dryRun: true }))];
  const unchanged = await tree(h);
  const diff = await run.diff();
  const texts = {
    notes: await h.fs.readFile("notes.txt", "utf8"),
    mine: await h.fs.readFile("out/mine.txt", "utf8"),
    old: await h.fs.readFile("old.txt", "utf8"),
  };
  // force reverts over the user's edit; reverting the revert brings the edit back
  const forced = await settle(run.revert({ force: true }));
  const forcedNotes = await h.fs.readFile("notes.txt", "utf8");
  const back = forced.ok ? await settle(h.revert(forced.value.revertId)) : null;
  const backNotes = await h.fs.readFile("notes.txt", "utf8");
  h.close();
  return {
    after,
    refused,
    unchanged,
    changedSince: Object.fromEntries(diff.map((d) => [d.path, d.changedSince])),
    texts,
    forced: { ok: forced.ok, notes: forcedNotes, back: back?.ok, backNotes },
  };
}

/** The page edits a file during the run before the run touches it, and one the run never
 * touches: the revert gives back the user's version (the run's pre-image) and leaves the
 * other alone. */
export async function pageEditsBeforeTheRunTouches() {
  const harness = {};
  const h = await boot({
    readBeforeWrite: false,
    tools: [
      userAtThePage(harness, [
        ["pre.txt", "the user's, before the run wrote\n"],
        ["aside.txt", "the user's aside\n"],
      ]),
    ],
    model: {
      api: "scripted",
      turns: [call("ask_user", {}), call("write", { path: "pre.txt", content: "by the run\n" }), { text: "done" }],
    },
  });
  harness.h = h;
  await h.fs.writeFile("pre.txt", "seed\n");
  const run = h.prompt("go");
  await run.done;
  const reverted = await settle(run.revert());
  const out = { reverted, pre: await h.fs.readFile("pre.txt", "utf8"), aside: await h.fs.readFile("aside.txt", "utf8") };
  h.close();
  return out;
}

/** The page edits what a run wrote after the run, even back to the run's own bytes: a
 * conflict, still after the workspace is reopened by a new harness. */
export async function pageEditAfterTheRun(name) {
  const h = await boot({
    workspace: name,
    model: { api: "scripted", turns: [call("write", { path: "a.txt", content: "by the run\n" }), { text: "done" }] },
  });
  const run = h.prompt("go");
  await run.done;
  await h.fs.writeFile("a.txt", "the user's edit\n");
  const edited = await settle(run.revert());
  await h.fs.writeFile("a.txt", "by the run\n"); // the run's bytes again, by the page
  const same = await settle(run.revert());
  const before = await tree(h);
  h.close();
  const h2 = await boot({ workspace: name });
  const reopened = await settle(h2.revert(run.id));
  const out = {
    edited,
    same,
    reopened,
    a: await h2.fs.readFile("a.txt", "utf8"),
    treesEqual: JSON.stringify(await tree(h2)) === JSON.stringify(before),
  };
  h2.close();
  return out;
}

/** A run that creates, writes, makes folders and deletes, in a stored workspace; the
 * harness is left open (reload) or closed (a new harness): the trees before and after. */
export async function aCreatingRunInAStoredWorkspace(name, close) {
  const h = await boot({
    workspace: name,
    shell: true,
    readBeforeWrite: false,
    model: {
      api: "scripted",
      turns: [
        call("write", { path: "new.txt", content: "made by the run\n" }),
        call("write", { path: "seeded.txt", content: "rewritten by the run\n" }),
        call("edit", { path: "src/main.py", edits: [{ oldText: "1", newText: "2" }] }),
        bash("mkdir -p made/deep && echo deep > made/deep/f.txt && rm gone.txt"),
        bash("python3 -c \"open('data.bin','wb').write(bytes(range(256)))\""),
        { text: "done" },
      ],
    },
  });
  await h.fs.writeFile("seeded.txt", "the page's seed\n");
  await h.fs.writeFile("gone.txt", "deleted by the run\n");
  await h.fs.mkdir("src", { recursive: true });
  await h.fs.writeFile("src/main.py", "print(1)\n");
  const before = await tree(h);
  const run = h.prompt("go");
  await run.done;
  const after = await tree(h);
  const storage = h.storage.kind;
  if (close) h.close();
  return { runId: run.id, before, after, storage };
}

/** The second half: a new harness over the stored workspace; the tree it finds, then the
 * revert of that run and the tree after it. */
export async function revertInANewHarness(name, runId) {
  const h = await boot({ workspace: name });
  const reopened = await tree(h);
  const listed = (await h.checkpoints()).map((c) => c.runId);
  const reverted = await settle(h.revert(runId));
  const back = await tree(h);
  const redo = reverted.ok ? await settle(h.revert(reverted.value.revertId)) : null;
  const redone = await tree(h);
  h.close();
  return { reopened, listed, reverted, back, redo, redone };
}

/** A small seeded generator (mulberry32): the same seed, the same story. */
function seeded(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The paths whose entry differs between two trees. */
const changedPaths = (a, b) =>
  [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((p) => JSON.stringify(a[p]) !== JSON.stringify(b[p]));

/**
 * A random story in a stored workspace (fixed seed, `steps` steps): runs (writes, shell
 * deletes and folders, the page editing while the run waits on it), the page's edits,
 * reverts (some cascaded), reopens by a new harness. After every revert: refused with
 * the tree unchanged, or done without touching a path whose last change was the page's;
 * a run reverted right after it ended gives back exactly the tree before it. Returns the
 * violations (none expected) and what happened, for the row's report.
 */
export async function randomStory(name, seed, steps) {
  const rand = seeded(seed);
  const pick = (items) => items[Math.floor(rand() * items.length)];
  const names = ["a.txt", "b.txt", "d/c.txt", "d/e/f.txt", "g.txt"];
  const text = () => `v${Math.floor(rand() * 1000)}\n`;
  const pageEdit = () => [pick(names), text()];
  // The runs, planned up front (each boot's scripted model gets the turns still to come).
  const plan = Array.from({ length: steps }, () => {
    const kind = pick(["run", "run", "run", "page", "revert", "revert", "undo-last", "reopen"]);
    if (kind !== "run" && kind !== "undo-last") return { kind };
    const turns = [];
    const during = [];
    for (let i = 0; i < 1 + Math.floor(rand() * 3); i++) {
      const r = rand();
      if (r < 0.5) turns.push(call("write", { path: pick(names), content: text() }));
      else if (r < 0.7) turns.push(bash(`rm -f ${pick(names)}`));
      else if (r < 0.8) turns.push(bash("rm -rf d"));
      else if (kind === "run") {
        turns.push(call("ask_user", {}));
        during.push(pageEdit());
      } else turns.push(call("write", { path: pick(names), content: text() }));
    }
    turns.push({ text: "done" });
    return { kind, turns, during };
  });
  const violations = [];
  const counts = { runs: 0, reverted: 0, refused: 0, reopened: 0, pageEdits: 0 };
  let pageLast = {}; // path → what the page left there (its last word)
  let duringQueue = [];
  let h;
  let seen = {};
  const forget = (paths) => {
    for (const p of paths) delete pageLast[p];
  };
  const pageDoes = async ([path, content]) => {
    const before = await tree(h);
    forget(changedPaths(seen, before)); // the run's, since the last look
    if (path.includes("/")) await h.fs.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
    await h.fs.writeFile(path, content);
    const after = await tree(h);
    for (const p of changedPaths(before, after)) pageLast[p] = after[p] ?? null;
    seen = after;
    counts.pageEdits++;
  };
  const tool = {
    name: "ask_user",
    description: "Wait for the user",
    parameters: { type: "object", properties: {} },
    run: async () => {
      const edit = duringQueue.shift();
      if (edit) await pageDoes(edit);
      return "ok";
    },
  };
  const open = async (from) => {
    h = await boot({
      workspace: name,
      shell: true,
      readBeforeWrite: false,
      tools: [tool],
      model: { api: "scripted", turns: plan.slice(from).flatMap((s) => s.turns ?? []) },
    });
  };
  await open(0);
  const runs = [];
  const revert = async (id, opts, exactly) => {
    const before = await tree(h);
    const result = await settle(h.revert(id, opts));
    const after = await tree(h);
    const changed = changedPaths(before, after);
    if (!result.ok) {
      counts.refused++;
      if (changed.length) violations.push({ id, refused: result.code, changed });
      return;
    }
    counts.reverted++;
    const lost = changed.filter((p) => p in pageLast);
    if (lost.length) violations.push({ id, lostPageEdits: lost });
    if (exactly !== undefined && JSON.stringify(after) !== JSON.stringify(exactly))
      violations.push({ id, notExactly: changedPaths(exactly, after) });
    forget(changed);
    seen = after;
  };
  for (const [i, step] of plan.entries()) {
    if (step.kind === "run" || step.kind === "undo-last") {
      const start = await tree(h);
      forget(changedPaths(seen, start));
      seen = start;
      duringQueue = [...step.during];
      const run = h.prompt(`step ${i}`);
      await run.done;
      counts.runs++;
      const end = await tree(h);
      forget(changedPaths(seen, end));
      seen = end;
      runs.push(run.id);
      if (step.kind === "undo-last") await revert(run.id, {}, start);
    } else if (step.kind === "page") await pageDoes(pageEdit());
    else if (step.kind === "revert" && runs.length) await revert(pick(runs), { cascade: rand() < 0.3 });
    else if (step.kind === "reopen") {
      const before = await tree(h);
      h.close();
      await open(i + 1);
      const after = await tree(h);
      if (JSON.stringify(after) !== JSON.stringify(before)) violations.push({ reopen: i, changed: changedPaths(before, after) });
      counts.reopened++;
    }
  }
  h.close();
  pageLast = {};
  return { violations, counts };
}
