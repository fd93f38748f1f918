// The page code of e2e/test_persistence.py's rows, one export per row or step, on
// e2e/pages/index.html; called from Python by e2e/conftest.py's call(). Each returns JSON
// values for the row's assertions, which stay in Python.

/** The page's helpers (index.html): the module, boot with the scripted model, settle a promise into {ok, ...}. */
const { pyharness, boot, settle } = window;

/** The harness a row keeps open across its steps (one writer, a full storage). */
let held;

const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Remove this origin's stored workspaces. */
export async function deleteAllWorkspaces() {
  for (const w of await pyharness.listWorkspaces()) await pyharness.deleteWorkspace(w.name);
}

/** Boot on a workspace: every path under /work with "dir" or the file's text, and h.storage. */
export async function bootAndList(workspace) {
  const h = await boot({ workspace });
  const walk = async (dir) => {
    const out = {};
    for (const e of await h.fs.readdir(dir)) {
      const path = `${dir}/${e.name}`;
      out[path] = e.type === "dir" ? "dir" : await h.fs.readFile(path, "utf8");
      if (e.type === "dir") Object.assign(out, await walk(path));
    }
    return out;
  };
  const files = await walk("/work");
  const storage = h.storage;
  h.close();
  return { files, storage };
}

/** Change files every way (page calls, then a run's tools) and leave the harness open: the row reloads under it. */
export async function writeEveryWayAndLeaveOpen() {
  const h = await boot({
    workspace: "w1",
    model: {
      api: "scripted",
      turns: [
        {
          toolCalls: [
            { name: "write", arguments: { path: "src/tool.txt", content: "by the tool" } },
            { name: "edit", arguments: { path: "src/tool.txt", edits: [{ oldText: "tool", newText: "edit tool" }] } },
          ],
        },
        { text: "done" },
      ],
    },
  });
  await h.fs.writeFile("page.txt", "by the page");
  await h.fs.writeFile("log.txt", "one\n");
  await h.fs.writeFile("log.txt", "two\n", { append: true });
  await h.fs.mkdir("a/b", { recursive: true });
  await h.fs.writeFile("a/b/f.txt", "deep");
  await h.fs.rename("a", "moved");
  await h.fs.writeFile("gone.txt", "x");
  await h.fs.rm("gone.txt");
  await h.fs.writeFile("weird\\name%.txt", "escaped");
  await h.fs.writeFile("shrink.txt", "0123456789");
  await h.fs.writeFile("shrink.txt", "abc"); // shorter: the old tail must go
  await h.fs.writeFile("shrink.txt", "de", { append: true }); // only the new bytes go out
  await h.prompt("write").done;
  // no close(): the page is reloaded under it
}

/** Kill the worker right after the second tool_end reached the page; what a new harness reads. */
export async function killWorkerAfterTheToolEnds() {
  const h = await boot({
    workspace: "w2",
    shell: true,
    model: {
      api: "scripted",
      turns: [
        {
          toolCalls: [
            { name: "write", arguments: { path: "first.txt", content: "1" } },
            { name: "bash", arguments: { command: "python3 -c \"open('py.txt', 'w').write('from the sandbox')\"" } },
          ],
        },
        { text: "done" },
      ],
    },
  });
  let ends = 0;
  await new Promise((resolve) => {
    h.subscribe((e) => {
      if (e.type === "tool_end" && ++ends === 2) {
        h._worker.terminate(); // killed right after the event reached the page
        resolve();
      }
    });
    h.prompt("go");
  });
  h.close();
  const again = await boot({ workspace: "w2" });
  const out = { first: await again.fs.readFile("first.txt", "utf8"), py: await again.fs.readFile("py.txt", "utf8") };
  again.close();
  return out;
}

/** Kill the worker right after an fs reply; the file's size, and whether a new harness reads it whole. */
export async function killWorkerAfterAnFsReply() {
  const h = await boot({ workspace: "w3" });
  await h.fs.writeFile("big.bin", new Uint8Array(1024 * 1024).fill(7));
  h._worker.terminate(); // right after the reply: it was on disk before it was sent
  h.close();
  const again = await boot({ workspace: "w3" });
  const bytes = await again.fs.readFile("big.bin");
  again.close();
  return { size: bytes.length, sevens: bytes.every((b) => b === 7) };
}

/** Boot on a workspace and keep the harness open for the row's later steps. */
export async function hold(workspace) {
  held = await boot({ workspace });
}

/** From a second tab: a boot on the workspace the first holds (settled), and one on another. */
export async function bootBesideTheHolder() {
  const other = await settle(boot({ workspace: "shared" }));
  const elsewhere = await boot({ workspace: "another" });
  elsewhere.close();
  return other;
}

/** The held harness's workspace list; deleting its workspace while open, then after close(). */
export async function deleteTheHeldWorkspace() {
  const list = await held.workspaces.list();
  const refused = await settle(held.workspaces.delete("shared"));
  held.close();
  await pause(100);
  const deleted = await settle(held.workspaces.delete("shared"));
  return { list, refused, deleted, after: await pyharness.listWorkspaces() };
}

/** A file written with storage "memory", and what a second such harness finds. */
export async function memoryStorageKeepsNothing() {
  const h = await boot({ workspace: "m", storage: "memory" });
  await h.fs.writeFile("x.txt", "x");
  const storage = h.storage;
  h.close();
  const again = await boot({ workspace: "m", storage: "memory" });
  const listing = await again.fs.readdir("/work");
  again.close();
  return { storage, listing };
}

/** Name the thread and run one prompt with this model; left open, the row reloads under it. */
export async function startAConversation(model) {
  const h = await boot({ workspace: "chat", model });
  await h.threads.rename((await h.threads.list()).current, "Numbers");
  await h.prompt("remember 42").done;
}

/** After the reload: the threads, the transcript, one more prompt, and a second thread. */
export async function resumeTheConversation(model) {
  const h = await boot({ workspace: "chat", model });
  const list = await h.threads.list();
  const transcript = await h.threads.transcript();
  const done = await h.prompt("what was it?").done;
  const other = await h.threads.create("Other");
  const after = await h.threads.list();
  await h.threads.switch(list.current);
  h.close();
  return { list, transcript, done, other, after };
}

/** Kill the worker mid-run; the transcript a new harness sees ([type, stopReason, interrupted]) and its next run. */
export async function cutARunOffAndRepair() {
  const turns = [
    {
      toolCalls: [
        { name: "write", arguments: { path: "a.txt", content: "a" } },
        { name: "ls", arguments: {} },
      ],
    },
    { text: "never finished", delayMs: 5000 },
    { text: "after the repair" },
  ];
  const h = await boot({ workspace: "cut", model: { api: "scripted", turns } });
  await new Promise((resolve) => {
    h.subscribe((e) => {
      if (e.type === "tool_end" && e.name === "write") {
        h._worker.terminate();
        resolve();
      }
    });
    h.prompt("start");
  });
  h.close();
  const again = await boot({ workspace: "cut", model: { api: "scripted", turns: [{ text: "after the repair" }] } });
  const transcript = await again.threads.transcript();
  const done = await again.prompt("go on").done;
  again.close();
  return { events: transcript.events.map((e) => [e.type, e.stopReason ?? null, e.interrupted ?? null]), done };
}

/** A hand-made "zip slip": a zip whose one entry is ../escape.txt. */
function zipSlip() {
  const name = new TextEncoder().encode("../escape.txt");
  const header = new Uint8Array(30 + name.length);
  const v = new DataView(header.buffer);
  v.setUint32(0, 0x04034b50, true);
  v.setUint16(26, name.length, true);
  header.set(name, 30);
  const central = new Uint8Array(46 + name.length);
  const c = new DataView(central.buffer);
  c.setUint32(0, 0x02014b50, true);
  c.setUint16(28, name.length, true);
  central.set(name, 46);
  const end = new Uint8Array(22);
  const e = new DataView(end.buffer);
  e.setUint32(0, 0x06054b50, true);
  e.setUint16(8, 1, true);
  e.setUint16(10, 1, true);
  e.setUint32(12, central.length, true);
  e.setUint32(16, header.length, true);
  return new Uint8Array([...header, ...central, ...end]);
}

/** Export one workspace as a zip and import it into another (replacing it), then a bad zip and a zip slip. */
export async function exportAndImportAZip() {
  const h = await boot({ workspace: "zip-a" });
  await h.fs.mkdir("src/deep", { recursive: true });
  await h.fs.writeFile("src/deep/a.py", "print('a')\n");
  await h.fs.writeFile("notes.md", "# notes\n");
  const zip = await h.fs.exportZip();
  h.close();
  const b = await boot({ workspace: "zip-b" });
  await b.fs.writeFile("old.txt", "goes away");
  const counts = await b.fs.importZip(zip, { replace: true });
  const listing = (await b.fs.readdir("/work")).map((e) => e.name);
  const a = await b.fs.readFile("src/deep/a.py", "utf8");
  const bad = await settle(b.fs.importZip(new TextEncoder().encode("not a zip")));
  const slip = await settle(b.fs.importZip(zipSlip()));
  const after = (await b.fs.readdir("/work")).map((e) => e.name);
  b.close();
  return { size: zip.length, counts, listing, a, bad, slip, after };
}

/** On a page that is not a secure context: storage "auto" (a run and page writes), then storage "opfs". */
export async function withoutOpfs() {
  const h = await boot({
    workspace: "w",
    model: { api: "scripted", turns: [{ toolCalls: [{ name: "write", arguments: { path: "t.txt", content: "tool" } }] }, { text: "ok" }] },
  });
  await h.fs.writeFile("p.txt", "page");
  const result = await h.prompt("write").done;
  const files = (await h.fs.readdir("/work")).map((e) => e.name);
  const storage = h.storage;
  h.close();
  const refused = await settle(boot({ workspace: "w", storage: "opfs" }));
  return { secure: window.isSecureContext, storage, result: result.stopReason, files, refused, listed: await pyharness.listWorkspaces() };
}

/** Hold a harness on workspace "full" (its script writes 300,000 bytes) with one small file saved. */
export async function holdFull() {
  held = await boot({
    workspace: "full",
    model: {
      api: "scripted",
      turns: [{ toolCalls: [{ name: "write", arguments: { path: "by-tool.txt", content: "t".repeat(300000) } }] }, { text: "written" }],
    },
  });
  await held.fs.writeFile("small.txt", "fits");
}

/** With the quota cut: a 1 MiB write (settled), h.storage.error, what the session kept, and a run that writes. */
export async function writePastTheQuota() {
  const big = await settle(held.fs.writeFile("big.bin", new Uint8Array(1024 * 1024).fill(5)));
  const error = held.storage.error;
  const kept = (await held.fs.readFile("big.bin")).length; // the session has it
  const run = await held.prompt("write more").done;
  return { big, error, kept, run, tool: (await held.fs.stat("by-tool.txt")).size };
}

/** With room again: one more write, h.storage.error, and what a new harness finds after close(). */
export async function saveWithRoomAgain() {
  await held.fs.writeFile("after.txt", "saved");
  const error = held.storage.error ?? null;
  held.close();
  await pause(100);
  const again = await boot({ workspace: "full" });
  const names = (await again.fs.readdir("/work")).map((e) => e.name);
  const big = (await again.fs.readFile("big.bin")).length;
  again.close();
  return { error, names, big };
}

/** The workspace's folder in OPFS (what persist.mjs stores), made if missing. */
async function storedDir(name) {
  const root = await navigator.storage.getDirectory();
  return (await root.getDirectoryHandle("pyharness", { create: true })).getDirectoryHandle(name, { create: true });
}

async function writeOpfs(dir, path, text) {
  const parts = path.split("/");
  for (const part of parts.slice(0, -1)) dir = await dir.getDirectoryHandle(part, { create: true });
  const writable = await (await dir.getFileHandle(parts[parts.length - 1], { create: true })).createWritable();
  await writable.write(text);
  await writable.close();
}

/** The names in the workspace's OPFS folder. */
async function storedNames(name) {
  const names = [];
  for await (const [entry] of (await storedDir(name)).entries()) names.push(entry);
  return names.sort();
}

/** A workspace as the previous format stored it (one OPFS file per file, in files/ and
 * state/, "%" and "\" escaped in names): opened, every file there, and how it is stored now. */
export async function openThePreviousFormat() {
  const dir = await storedDir("old");
  await writeOpfs(dir, "files/a.txt", "alpha");
  await writeOpfs(dir, "files/src/deep/b.py", "print('b')");
  await writeOpfs(dir, "files/odd%5cname%25.txt", "escaped");
  await (await dir.getDirectoryHandle("files")).getDirectoryHandle("empty", { create: true });
  const h = await boot({ workspace: "old" });
  const files = {};
  const walk = async (path) => {
    for (const e of await h.fs.readdir(path)) {
      const child = `${path}/${e.name}`;
      files[child] = e.type === "dir" ? "dir" : await h.fs.readFile(child, "utf8");
      if (e.type === "dir") await walk(child);
    }
  };
  await walk("/work");
  await h.fs.writeFile("after.txt", "written after the move");
  const restored = h.storage.restoredFiles;
  await h.close();
  const stored = await storedNames("old");
  const again = await bootAndList("old");
  return { files, restored, stored, again: again.files };
}

/** A log whose tail was torn (garbage after its last record): the workspace opens with
 * every file the good records hold, and writes after that are kept. */
export async function openWithATornLogTail() {
  const first = await boot({ workspace: "torn" });
  await first.fs.writeFile("kept.txt", "kept");
  await first.fs.writeFile("also.txt", "also");
  await first.close();
  const dir = await storedDir("torn");
  const log = (await storedNames("torn")).find((n) => n.startsWith("log."));
  const handle = await dir.getFileHandle(log);
  const size = (await handle.getFile()).size;
  const writable = await handle.createWritable({ keepExistingData: true });
  await writable.write({ type: "write", position: size, data: new Uint8Array([9, 0, 0, 0, 123, 34, 111, 112]) });
  await writable.close();
  const second = await boot({ workspace: "torn" });
  await second.fs.writeFile("later.txt", "later");
  await second.close();
  return { after: (await bootAndList("torn")).files, grown: size };
}

/** A workspace of `count` files written by one importZip (`zip`: base64), a command run
 * over it, then the harness closed and the workspace opened again: what it restored,
 * and how long the boot took (createHarness until it resolves), beside an empty one's. */
export async function reopenAWorkspaceOf(zip, count) {
  const bytes = Uint8Array.from(atob(zip), (c) => c.charCodeAt(0));
  const h = await boot({
    workspace: "big",
    shell: true,
    model: {
      api: "scripted",
      turns: [{ toolCalls: [{ name: "bash", arguments: { command: "ls d3 | wc -l; echo made > made.txt" } }] }, { text: "done" }],
    },
  });
  await h.fs.importZip(bytes);
  const ends = [];
  for await (const e of h.prompt("count")) if (e.type === "tool_end") ends.push(e.output);
  await h.close();
  const timed = async (workspace) => {
    const started = performance.now();
    const again = await boot({ workspace });
    const ms = performance.now() - started;
    const out = { ms, restored: again.storage.restoredFiles, top: (await again.fs.readdir("/work")).length };
    out.sample = await again.fs.readFile(`/work/d${(count - 1) % 10}/f${count - 1}.txt`, "utf8").catch((e) => e.code);
    await again.close();
    return out;
  };
  const empty = await timed("empty");
  const big = await timed("big");
  return { command: ends, empty, big, stored: await storedNames("big") };
}
