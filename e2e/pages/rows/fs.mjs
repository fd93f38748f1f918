// The page code of e2e/test_fs.py's rows, one export per row, on e2e/pages/index.html;
// called from Python by e2e/conftest.py's call(). Each returns JSON values for the row's
// assertions, which stay in Python.

/** The page's helpers (index.html): boot with the scripted model, settle a promise into {ok, ...}. */
const { boot, settle, sha256 } = window;

export async function everyOpAndItsErrorCodes() {
  const h = await boot();
  const fs = h.fs;
  const out = {};
  await fs.writeFile("a.txt", "hello");
  await fs.writeFile("/work/a.txt", ", world", { append: true });
  out.text = await fs.readFile("a.txt", { encoding: "utf8" });
  out.bytes = Array.from(await fs.readFile("a.txt")).length;
  out.isU8 = (await fs.readFile("a.txt")) instanceof Uint8Array;
  await fs.writeFile("log.txt", "x", { append: true });
  out.appendNew = await fs.readFile("log.txt", "utf8");
  await fs.mkdir("deep/er/est", { recursive: true });
  await fs.mkdir("deep/er/est", { recursive: true });
  await fs.writeFile("deep/er/est/f.txt", "f");
  out.stat = await fs.stat("a.txt");
  out.statDir = (await fs.stat("deep")).type;
  out.root = await fs.readdir("/work");
  await fs.rename("a.txt", "deep/b.txt");
  out.afterRename = await fs.readdir("deep");
  out.errors = {
    enoent: await settle(fs.readFile("nope.txt")),
    eisdir: await settle(fs.readFile("deep")),
    enotdir: await settle(fs.readdir("log.txt")),
    eexist: await settle(fs.mkdir("deep")),
    mkdirNoParent: await settle(fs.mkdir("x/y")),
    rmDir: await settle(fs.rm("deep")),
    rmEmptyDir: await settle(
      (async () => {
        await fs.mkdir("empty");
        await fs.rm("empty");
        return fs.stat("empty");
      })(),
    ),
    throughFile: await settle(fs.readFile("log.txt/x")),
    rmMissing: await settle(fs.rm("nope")),
    enotempty: await settle(
      (async () => {
        await fs.mkdir("e/er", { recursive: true });
        await fs.writeFile("e/er/z", "");
        return fs.rename("deep/er", "e/er");
      })(),
    ),
    eacces: await settle(fs.readFile("/etc/passwd")),
    escape: await settle(fs.writeFile("../../x", "y")),
    sibling: await settle(fs.stat("/work2/x")),
    empty: await settle(fs.stat("")),
    badType: await settle(fs.stat(42)),
    badData: await settle(fs.writeFile("z", { not: "bytes" })),
    badEncoding: await settle(fs.readFile("log.txt", { encoding: "latin1" })),
    unknownOp: await settle(fs._op({ op: "chmod", path: "log.txt" })),
    rmRoot: await settle(fs.rm("/work", { recursive: true })),
  };
  await fs.rm("nope", { force: true });
  await fs.rm("deep", { recursive: true });
  out.final = (await fs.readdir(".")).map((e) => e.name);
  h.close();
  return out;
}

export async function binaryRoundTripAllByteValues() {
  const h = await boot();
  const data = new Uint8Array(256 * 64);
  for (let i = 0; i < data.length; i++) data[i] = i % 256;
  const before = await sha256(data);
  await h.fs.writeFile("bin/all.dat", data).catch(() => null); // no parent: ENOENT
  await h.fs.mkdir("bin");
  await h.fs.writeFile("bin/all.dat", data);
  const back = await h.fs.readFile("bin/all.dat");
  const stillOurs = data.byteLength; // the caller's buffer is not detached
  await h.fs.writeFile("bin/view.dat", new Uint16Array([0x0102, 0xfffe]));
  const view = Array.from(await h.fs.readFile("bin/view.dat"));
  await h.fs.writeFile("bin/sub.dat", data.subarray(1, 4)); // a view into a larger buffer
  const sub = Array.from(await h.fs.readFile("bin/sub.dat"));
  await h.fs.writeFile("bin/ab.dat", data.buffer);
  const ab = (await h.fs.readFile("bin/ab.dat")).length;
  h.close();
  return { before, after: await sha256(back), length: back.length, stillOurs, view, sub, ab, stillOursAfter: data.byteLength };
}

/** How many messages the page sent the worker for one recursive mkdir, and for one recursive rm. */
export async function recursiveMkdirAndRmMessages() {
  const h = await boot();
  const sent = [];
  const post = h._worker.postMessage.bind(h._worker);
  h._worker.postMessage = (m, t) => {
    sent.push(m.type);
    return post(m, t);
  };
  await h.fs.mkdir("a/b/c/d/e", { recursive: true });
  const afterMkdir = sent.length;
  for (let i = 0; i < 20; i++) await h.fs.writeFile(`a/b/c/f${i}`, "x");
  sent.length = 0;
  await h.fs.rm("a", { recursive: true });
  const rmMessages = sent.length;
  const left = await h.fs.readdir(".");
  h.close();
  return { afterMkdir, rmMessages, left };
}

export async function closeWithCallsPending() {
  const h = await boot();
  await h.fs.writeFile("big.bin", new Uint8Array(8 * 1024 * 1024));
  const pending = [h.fs.readFile("big.bin"), h.fs.stat("big.bin"), h.fs.readdir(".")];
  const run = h.prompt("hi");
  h.close();
  const results = await Promise.all(pending.map(settle));
  const after = await settle(h.fs.stat("big.bin"));
  const runDone = await settle(run.done);
  const promptAfter = await settle(h.prompt("again").done);
  h.close(); // twice is fine
  return { results, after, runDone, promptAfter };
}

export async function badInputThenAWrite() {
  const h = await boot();
  const bad = [];
  bad.push(await settle(h.fs.readFile(null)));
  bad.push(await settle(h.fs.mkdir({})));
  bad.push(await settle(h.fs.rename("a")));
  bad.push(await settle(h.fs._op({ op: "readFile", path: "x", extra: true })));
  bad.push(await settle(h._request({ type: "fs", request: 12 })));
  h._worker.postMessage("garbage");
  h._worker.postMessage({ type: "nonsense" });
  await h.fs.writeFile("ok.txt", "still alive");
  const text = await h.fs.readFile("ok.txt", "utf8");
  h.close();
  return { codes: bad.map((b) => b.code), text };
}
