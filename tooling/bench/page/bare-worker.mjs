// The baselines' worker: bare Pyodide from the same bundle (or the stock npm package,
// served unmodified at /stock/), and just-bash over its own in-memory filesystem.
// Answers {id, ...} to {id, op, ...}.
let pyodide = null;

self.onmessage = async ({ data }) => {
  const { id, op } = data;
  try {
    const reply = await ops[op](data);
    self.postMessage({ id, ok: true, ...reply });
  } catch (err) {
    self.postMessage({ id, ok: false, message: String(err?.stack ? err.stack : err) });
  }
};

const ops = {
  async boot({ base, stock, snapshot }) {
    const t0 = performance.now();
    if (snapshot) {
      // `--snapshot-probe`: the bundle's runtime restored from a memory snapshot.
      const { loadPyodide } = await import(new URL("pyodide/pyodide.mjs", base).href);
      pyodide = await loadPyodide({
        indexURL: new URL("pyodide/", base).href,
        lockFileURL: new URL("pyodide/pyodide-lock.json", base).href,
        _loadSnapshot: fetch(new URL(snapshot, base)).then((r) => r.arrayBuffer()),
      });
    } else if (stock) {
      // As a user loads the npm package: its own files and lock file, default options.
      const index = new URL("/stock/", base).href;
      const { loadPyodide } = await import(new URL("pyodide.mjs", index).href);
      pyodide = await loadPyodide({ indexURL: index });
    } else {
      const { loadPyodide } = await import(new URL("pyodide/pyodide.mjs", base).href);
      pyodide = await loadPyodide({
        indexURL: new URL("pyodide/", base).href,
        lockFileURL: new URL("pyodide/pyodide-lock.json", base).href,
      });
    }
    return { ms: performance.now() - t0 };
  },

  /** The physical floor of h.fs throughput: the same bytes into Pyodide's in-memory FS
   * and out again, with nothing around it. */
  fsFloor({ mb }) {
    const data = new Uint8Array(mb * 1024 * 1024).fill(7);
    const t = performance.now();
    pyodide.FS.writeFile("/tmp/floor.bin", data);
    const back = pyodide.FS.readFile("/tmp/floor.bin");
    const ms = performance.now() - t;
    if (back.length !== data.length) throw new Error("short read");
    pyodide.FS.unlink("/tmp/floor.bin");
    return { mbps: (2 * mb) / (ms / 1000) };
  },

  stats() {
    return { wasmBytes: pyodide._module.HEAPU8.buffer.byteLength, jsHeapBytes: performance.memory?.usedJSHeapSize ?? null };
  },

  async loadHarness() {
    await pyodide.loadPackage(["pyharness"]);
    return {};
  },

  /** Python run directly in this worker; returns what the code evaluates to (a number). */
  python({ code }) {
    return { value: pyodide.runPython(code) };
  },

  async bash({ base, command, reps }) {
    const t0 = performance.now();
    const { Bash } = await import(new URL("sandbox.mjs", base).href);
    const bash = new Bash({ cwd: "/home/user" });
    const loadMs = performance.now() - t0;
    for (let i = 0; i < 5; i++) await bash.exec(command); // warm up
    const t = performance.now();
    for (let i = 0; i < reps; i++) {
      const r = await bash.exec(command);
      if (r.stdout !== "3\n") throw new Error(`unexpected output ${JSON.stringify(r.stdout)}`);
    }
    return { loadMs, batchMs: performance.now() - t };
  },
};
