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
