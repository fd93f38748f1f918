// The sandbox: where code the model wrote runs (bash command lines and python3).
//
// This module runs in a `data:` module worker inside a sandboxed, opaque-origin iframe
// whose CSP allows no network at all (embed/page/sandbox-host.mjs builds it). It gets
// everything by message: the Pyodide files as Blobs (served to loadPyodide through a
// fetch shim, since the sandbox cannot fetch) and a MessagePort to the harness worker.
// It has its own Pyodide (stdlib only, plus what `pip` installs from the bundle's index
// or an index the page allows, shell/pyharness_pip.py), its own copy of /work and a
// scratch /tmp, and nothing else: no key, no conversation, no harness. The harness sends the workspace's
// changes before a command and takes the command's changes back through its jail
// (harness/workspace/sandbox.py). Killing the iframe kills all of it; the harness then starts a
// fresh one. Bundled by `pyharness build` into dist/sandbox.mjs.
import { Bash, defineCommand, getCommandNames } from "just-bash/browser";
import PYEXEC from "./pyexec.py";
import NET from "./pyharness_net.py";
import PIP from "./pyharness_pip.py";
import { belowWork, onFsChange } from "../embed/shared/fs-hooks.mjs";
import { receiver } from "../embed/shared/protocol.mjs";
import { gateCommands } from "./command-gate.mjs";
import { WorkFs, normalize } from "./fs-adapter.mjs";
import { GitFs } from "./git/git-fs.mjs";
import { runGit } from "./git/git.mjs";

const INDEX = "https://sandbox.pyharness.invalid/"; // never fetched: the shim answers
const MOUNTS = ["/work", "/tmp"];
const latin1ToBytes = (s) => Uint8Array.from(s, (c) => c.charCodeAt(0));
const bytesText = (s) => new TextDecoder().decode(latin1ToBytes(s));

/** The answer to one network request (Sandbox.net).
 * @typedef {{ok: false, error: string} | {ok: true, status: number, statusText: string, headers: string, body: Uint8Array<ArrayBuffer>, url: string}} NetReply */

// For `pyharness bench`: just-bash over its own in-memory filesystem, the shell's baseline.
export { Bash };

export const COMMANDS = [...new Set([...getCommandNames(), "python3", "python", "pip", "pip3", "git"])].sort();

/**
 * @param {{files: Record<string, Blob>, port: MessagePort, report: (m: object) => void, probeUrl?: string}} init
 */
export async function start({ files, port, report, probeUrl }) {
  const started = performance.now();
  try {
    const pyodide = await bootPyodide(files);
    const sandbox = new Sandbox(pyodide, (m, t) => port.postMessage(m, t));
    const probes = await probe(probeUrl);
    port.onmessage = (event) => sandbox.receive(event.data);
    const ready = { type: "ready", ms: Math.round(performance.now() - started), probes };
    port.postMessage(ready);
    report(ready);
  } catch (err) {
    const failed = { type: "boot_error", message: err instanceof Error ? err.message : String(err) };
    port.postMessage(failed);
    report(failed);
  }
}

async function bootPyodide(files) {
  const url = (name) => {
    if (!(files[name] instanceof Blob)) throw new Error(`the sandbox did not get ${name}`);
    return URL.createObjectURL(files[name]);
  };
  // The sandbox cannot fetch (its CSP has no connect-src): answer Pyodide's few loads
  // from the Blobs the page sent, during the boot only.
  self.fetch = async (input) => {
    const name =
      String(input instanceof Request ? input.url : input)
        .split("/")
        .pop() ?? ""; // (split gives one part at least)
    const blob = files[name];
    if (!(blob instanceof Blob)) throw new TypeError(`the sandbox has no network (${name})`);
    const type = name.endsWith(".wasm") ? "application/wasm" : "application/octet-stream";
    return new Response(blob, { headers: { "Content-Type": type } });
  };
  try {
    const { loadPyodide } = await import(url("pyodide.mjs"));
    const asm = await import(url("pyodide.asm.mjs"));
    return await loadPyodide({
      indexURL: INDEX,
      packageBaseUrl: INDEX, // the lock's wheels: asked of the harness by name (fetch below)
      createPyodideModule: asm.default,
      lockFileContents: await files["pyodide-lock.json"].text(),
      fullStdLib: false,
      stdout: () => {},
      stderr: () => {},
    });
  } finally {
    // Until the Sandbox takes it over (below): the platform's own, which the CSP refuses.
    self.fetch = fetchOriginal;
  }
}

/** Measured at boot, before any model code runs: what the platform refuses here. */
async function probe(probeUrl) {
  const refused = async (fn) => {
    try {
      await fn();
      return false;
    } catch {
      return true;
    }
  };
  return {
    origin: self.origin,
    network: probeUrl ? await refused(() => fetchOriginal(probeUrl)) : null,
    indexedDB: await refused(
      () =>
        new Promise((resolve, reject) => {
          const req = indexedDB.open("pyharness-probe");
          req.onsuccess = resolve;
          req.onerror = () => reject(req.error);
        }),
    ),
    cacheStorage: await refused(() => caches.keys()),
    opfs: await refused(() => navigator.storage.getDirectory()),
    // The probe: an (indirect) eval that the CSP must refuse. A page whose own CSP refuses
    // eval gets a violation report of it (a srcdoc frame is under the page's policy too,
    // and refusing is not possible without trying): its sample names pyharness.
    // biome-ignore lint/security/noGlobalEval: the probe
    eval: await refused(() => globalThis.eval("'pyharness sandbox probe: eval must be refused'")),
  };
}

// The real fetch, kept only for the boot probe (the shims replace it).
const fetchOriginal = globalThis.fetch?.bind(globalThis);

const NET_DIR = "/lib/pyharness";
const MAX_ALLOWED_KEPT = 10_000; // allowed commands remembered for one line
const PAUSE_ALLOWANCE_MS = 24 * 3600 * 1000; // just-bash's deadline when ours can pause

/** What the harness may send (embed/shared/protocol.mjs, harnessToSandbox), and what each does. */
const FROM_HARNESS = receiver(
  "harnessToSandbox",
  {
    run: (sandbox, message) => sandbox.start(message),
    cancel: (sandbox) => sandbox.current?.abort("cancelled"),
    net_result: (sandbox, message) => sandbox.answered(message),
    gate_result: (sandbox, message) => sandbox.answered(message),
  },
  {
    idle: (sandbox) => sandbox.nonce === null,
    running: (sandbox, { nonce }) => sandbox.nonce !== null && nonce === sandbox.nonce,
    netPending: (sandbox, { id }) => sandbox.netRequests.has(id),
  },
);

class Sandbox {
  constructor(pyodide, post) {
    this.post = post;
    this.netRequests = new Map(); // id → resolve, for requests the page answers
    this.nextNet = 1;
    this.bashes = new Map(); // limits (JSON) → Bash: one per set of limits, made once
    this.pyodide = pyodide;
    const FS = pyodide.FS;
    this.FS = FS;
    for (const dir of MOUNTS) if (!FS.analyzePath(dir).exists) FS.mkdir(dir);
    const errnoNames = pyodide.runPython("import errno, json; json.dumps(errno.errorcode)");
    const namespace = pyodide.globals.get("dict")();
    pyodide.runPython(PYEXEC, { globals: namespace });
    this.runPython = namespace.get("run_python_json");
    // pyharness_net (python3's way to the allowed network) over this sandbox's port.
    FS.mkdirTree(NET_DIR);
    FS.writeFile(`${NET_DIR}/pyharness_net.py`, NET);
    pyodide.registerJsModule("pyharness_net_js", { request: (json) => this.net(JSON.parse(json)) });
    // pip (shell/pyharness_pip.py): `pip`, `pip3` and `python3 -m pip` are one module.
    FS.writeFile(`${NET_DIR}/pyharness_pip.py`, PIP);
    FS.mkdirTree(`${NET_DIR}/pip`);
    FS.writeFile(`${NET_DIR}/pip/__init__.py`, '"""pip in the pyharness sandbox (pyharness_pip)."""\n');
    FS.writeFile(`${NET_DIR}/pip/__main__.py`, "import sys\nfrom pyharness_pip import main\nraise SystemExit(main(sys.argv[1:]))\n");
    pyodide.runPython(`import sys; sys.path.append("${NET_DIR}")`);
    const pip = pyodide.pyimport("pyharness_pip");
    pip.install_finder();
    this.pip = pip;
    this.restored = false; // the packages an earlier sandbox had are installed here
    // Every fetch of code in this sandbox (micropip's, Pyodide's package loads, js.fetch)
    // goes through the harness: a bundle file by name, anything else to the page's
    // network rules. The sandbox itself still has no network (its CSP).
    self.fetch = (input, init) => this.fetch(input, init);
    const resolve = (path) => {
      const p = normalize(path);
      return MOUNTS.some((m) => p === m || p.startsWith(`${m}/`)) ? p : undefined;
    };
    this.fs = new WorkFs(FS, resolve, JSON.parse(errnoNames));
    this.tracker = new ChangeTracker(FS);
    this.current = null; // AbortController of the running command
    this.clock = new Clock(
      0,
      () => {},
      () => {},
    ); // the running command's deadline
    this.nonce = null; // the running command's, echoed in its result
    this.allowed = new Set(); // the running line's allowed commands (gate)
  }

  receive(message) {
    FROM_HARNESS.receive(this, message, () => {}); // nobody to tell: what is not expected is ignored
  }

  start(message) {
    this.nonce = message.nonce;
    this.run(message).then(
      (reply) =>
        this.finish(
          reply,
          reply.changes.files.map((f) => f.data.buffer),
        ),
      (err) => this.finish({ type: "result", nonce: message.nonce, error: String(err?.message ? err.message : err) }),
    );
  }

  /** The command's one result; its network requests still waiting end with it, and
   * nothing more is sent until the next command (the harness tears down a sandbox that
   * speaks out of turn). */
  finish(reply, transfer = []) {
    this.nonce = null;
    for (const resolve of this.netRequests.values()) resolve({ error: "network: the command ended" });
    this.netRequests.clear();
    this.post(reply, transfer);
  }

  /** One request to the allowed network: the harness asks the page, which decides.
   * Resolves with {ok: false, error} or {ok: true, status, statusText, headers (JSON), body, url}.
   * @returns {Promise<NetReply>} */
  net({ url, method = "GET", headers = {}, body = null }) {
    /** @returns {NetReply} */
    const toReply = (reply) =>
      typeof reply.error === "string"
        ? { ok: false, error: reply.error }
        : {
            ok: true,
            status: reply.status,
            statusText: reply.statusText,
            headers: JSON.stringify(reply.headers ?? {}),
            body: new Uint8Array(reply.body),
            url: reply.url,
          };
    return this.ask({ type: "net", url: String(url), method: String(method), headers, body: body ?? null }).then(toReply);
  }

  /** Ask the harness whether a command may run (shell/command-gate.mjs): the command's
   * clock stands still meanwhile. Resolves with null or the refusal. */
  async gate(command, argv) {
    // An allowed command stays allowed for the rest of its line (rules do not change
    // and grants only add): a loop asks once per distinct command, not per iteration.
    const key = JSON.stringify(argv); // the words, not their joined text: "a b" is not a, b
    if (this.allowed.has(key)) return null;
    this.clock.pause(); // the page's answer is not the command's time
    try {
      const reply = await this.ask({ type: "gate", command, argv });
      if (typeof reply.error === "string") return reply.error;
      if (typeof reply.refusal === "string") return reply.refusal;
      if (this.allowed.size < MAX_ALLOWED_KEPT) this.allowed.add(key);
      return null;
    } finally {
      this.clock.resume();
    }
  }

  /** The harness's answer to one request of `ask`. */
  answered(message) {
    const resolve = this.netRequests.get(message.id);
    this.netRequests.delete(message.id);
    resolve(message);
  }

  /** One request to the harness, answered by a `net_result` or `gate_result` (or ended
   * with the command). */
  ask(message) {
    if (this.nonce === null) return Promise.resolve({ error: "no command is running" });
    const id = this.nextNet++;
    return new Promise((resolve) => {
      this.netRequests.set(id, resolve);
      this.post({ ...message, id });
    });
  }

  /** The sandbox's fetch: a file of the bundle's package index (Pyodide's loadPackage,
   * micropip) by name from the harness, any other URL through the page's network rules. */
  async fetch(input, init = {}) {
    const request = input instanceof Request ? input : null;
    const url = String(request ? request.url : input);
    if (url.startsWith(INDEX)) {
      const reply = await this.ask({ type: "pkg", file: url.slice(INDEX.length) });
      if (typeof reply.error === "string") throw new TypeError(reply.error);
      return new Response(reply.body, { headers: { "Content-Type": "application/octet-stream" } });
    }
    const headers = Object.fromEntries(new Headers(init.headers ?? request?.headers ?? {}));
    const method = String(init.method ?? request?.method ?? "GET").toUpperCase();
    const body = typeof init.body === "string" ? init.body : null;
    const reply = await this.net({ url, method, headers, body });
    if ("error" in reply) throw new TypeError(reply.error);
    const empty = [101, 204, 205, 304].includes(reply.status);
    return new Response(empty ? null : reply.body, {
      status: reply.status,
      statusText: reply.statusText,
      headers: JSON.parse(reply.headers),
    });
  }

  /** just-bash's fetch (curl): the same way out. */
  async curlFetch(url, options = {}) {
    const headers = options.headers instanceof Headers ? Object.fromEntries(options.headers) : (options.headers ?? {});
    const reply = await this.net({ url, method: options.method ?? "GET", headers, body: options.body ?? null });
    if ("error" in reply) throw new Error(reply.error);
    return { status: reply.status, statusText: reply.statusText, headers: JSON.parse(reply.headers), body: reply.body, url: reply.url };
  }

  /** isomorphic-git's HTTP client (a remote's smart HTTP): the same way out as curl's,
   * with the body as bytes; the page decides, and adds credentials on its side.
   * @param {{url: string, method?: string, headers?: Record<string, string>, body?: any}} request */
  async gitRequest({ url, method = "GET", headers = {}, body = null }) {
    let bytes = null;
    if (body) {
      const chunks = [];
      for await (const chunk of body) chunks.push(chunk);
      bytes = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0));
      let at = 0;
      for (const chunk of chunks) {
        bytes.set(chunk, at);
        at += chunk.byteLength;
      }
    }
    const reply = await this.ask({ type: "net", url: String(url), method: String(method), headers, body: bytes ? bytes.buffer : null });
    if (typeof reply.error === "string") throw new Error(reply.error);
    return {
      url: reply.url,
      method,
      statusCode: reply.status,
      statusMessage: reply.statusText,
      headers: Object.fromEntries(Object.entries(reply.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v])),
      body: [new Uint8Array(reply.body)],
    };
  }

  /** just-bash with python3/python backed by this sandbox's Pyodide. */
  shell(limits) {
    const key = JSON.stringify(limits);
    if (this.bashes.has(key)) return this.bashes.get(key);
    const python = (name, prefix = []) =>
      defineCommand(name, async (args, ctx) => {
        const request = JSON.stringify({
          args: [...prefix, ...args],
          cwd: ctx.cwd,
          stdin: ctx.stdin ? bytesText(ctx.stdin) : "",
          timeoutMs: Math.max(0, this.deadline - performance.now()),
        });
        try {
          // callPromising: python3 code may wait for the network (pyharness_net, JSPI).
          const call = this.runPython.callPromising ?? this.runPython;
          return JSON.parse(await call.call(this.runPython, request));
        } finally {
          this.fs.forget();
        }
      });
    // git (shell/git/) over the same files, as the page's author unless the shell says otherwise
    // (`gitAuthor`: the page's git.author, or its default: harness/config.py GitConfig.)
    const gitCommand = defineCommand("git", (args, ctx) =>
      runGit(args, {
        fs: new GitFs(this.fs),
        cwd: ctx.cwd,
        env: Object.fromEntries(ctx.env),
        identity: limits.gitAuthor,
        stdin: ctx.stdin ? bytesText(ctx.stdin) : "",
        http: { request: (r) => this.gitRequest(r) },
      }),
    );
    const bash = new Bash({
      fs: this.fs,
      cwd: "/work",
      env: { HOME: "/work", TMPDIR: "/tmp", USER: "user", LANG: "C.UTF-8" },
      executionLimits: {
        maxCommandCount: limits.maxCommands,
        maxLoopIterations: limits.maxCommands,
        maxOutputSize: limits.maxOutputBytes,
        // With the rules asked as commands run, the deadline is this sandbox's clock
        // (below), which stands still while the page is asked; just-bash's cannot.
        maxExecutionTimeMs: limits.gate ? limits.timeoutMs + PAUSE_ALLOWANCE_MS : limits.timeoutMs,
      },
      customCommands: [python("python3"), python("python"), python("pip", ["-m", "pip"]), python("pip3", ["-m", "pip"]), gitCommand],
      ...(limits.network ? { fetch: (url, options) => this.curlFetch(url, options) } : {}),
    });
    if (limits.gate) gateCommands(bash, (command, argv) => this.gate(command, argv));
    this.bashes.set(key, bash);
    return bash;
  }

  async run({ nonce, command, limits, sync, packages }) {
    this.tracker.load(sync);
    const note = await this.packages(packages, limits);
    // Installing again is not the command's time: its deadline starts from here.
    if ((packages?.installed ?? []).length > 0) this.post({ type: "restored", nonce });
    const result = command === "" ? { stdout: "", stderr: "", exitCode: 0, timedOut: false } : await this.exec(String(command), limits);
    // What is installed now, for the harness to install again in the next sandbox.
    const installed = JSON.parse(this.pip.installed());
    return { type: "result", nonce, ...result, stderr: note + result.stderr, changes: this.tracker.collect(), installed };
  }

  /** Tell pip what the page allows, and install again what earlier sandboxes had (the
   * first command of this sandbox, usually the harness's preload, pays for it). */
  async packages({ available = [], installed = [] } = {}, limits) {
    this.pip.configure(JSON.stringify({ indexUrls: limits.indexUrls ?? [], available }));
    if (this.restored || installed.length === 0) return "";
    this.restored = true;
    const call = this.pip.restore.callPromising ?? this.pip.restore;
    try {
      return String(await call.call(this.pip.restore, JSON.stringify(installed)));
    } catch (err) {
      return `pip: the packages installed earlier could not be installed again (${err?.message ?? err})\n`;
    }
  }

  async exec(command, limits) {
    const controller = new AbortController();
    this.current = controller;
    this.fs.writeBudget = limits.maxOutputBytes;
    this.allowed = new Set(); // commands the harness allowed in this line
    this.fs.forget();
    this.deadline = performance.now() + limits.timeoutMs;
    const bash = this.shell(limits);
    this.clock = new Clock(
      limits.timeoutMs,
      () => controller.abort("timeout"),
      (at) => (this.deadline = at),
    );
    try {
      const r = await bash.exec(command, { cwd: "/work", signal: controller.signal });
      const stdout = r.stdoutKind === "bytes" || r.stdoutEncoding === "binary" ? bytesText(r.stdout) : r.stdout;
      // 124 is a deadline (ours or just-bash's maxExecutionTimeMs) unless the run was cancelled.
      const timedOut = r.exitCode === 124 && controller.signal.reason !== "cancelled";
      return { stdout, stderr: r.stderr, exitCode: r.exitCode, timedOut };
    } catch (err) {
      return { stdout: "", stderr: `bash: ${err?.message ? err.message : err}\n`, exitCode: 1, timedOut: false };
    } finally {
      this.clock.stop();
      this.current = null;
    }
  }
}

/** A command's deadline that stands still while it waits for the page (pause/resume
 * nest); `moved(at)` is told the new deadline on each resume. */
class Clock {
  constructor(ms, expire, moved) {
    this.left = ms;
    this.since = performance.now();
    this.expire = expire;
    this.moved = moved;
    this.paused = 0;
    this.timer = setTimeout(expire, ms);
  }

  pause() {
    if (this.paused++ > 0) return;
    clearTimeout(this.timer);
    this.left -= performance.now() - this.since;
  }

  resume() {
    if (--this.paused > 0) return;
    this.since = performance.now();
    this.timer = setTimeout(this.expire, Math.max(0, this.left));
    this.moved(this.since + this.left);
  }

  stop() {
    clearTimeout(this.timer);
  }
}

/**
 * What a command changed in the sandbox's /work, as the filesystem hooks tell it
 * (shared/fs-hooks.mjs): every path a write, a truncation, a creation, a removal or a
 * rename touched since the harness's changes were loaded. No tree scan, so a command
 * costs what it changed, not what /work holds; and no clock can hide a write.
 */
class ChangeTracker {
  constructor(FS) {
    this.FS = FS;
    this.touched = new Set(); // paths below /work changed by the command
    this.loading = false; // the harness's own changes are not the command's
    onFsChange(FS, (change) => {
      if (this.loading) return;
      if (belowWork(change.path)) this.touched.add(change.path);
      if (change.op === "rename" && belowWork(change.to)) this.touched.add(change.to);
    });
  }

  /** Take the harness's workspace changes (before a command). `pack`: every file's
   * bytes in one buffer, each file `[at, at + size)` of it. */
  load({ full, dirs, files, removed, pack }) {
    const FS = this.FS;
    this.loading = true;
    try {
      if (full) {
        for (const name of FS.readdir("/work")) if (name !== "." && name !== "..") removeTree(FS, `/work/${name}`);
      }
      for (const path of removed) removeTree(FS, checked(path));
      for (const path of dirs) {
        const p = checked(path);
        const at = FS.analyzePath(p);
        if (at.exists && !FS.isDir(FS.lstat(p).mode)) FS.unlink(p);
        if (!at.exists || !FS.isDir(FS.lstat(p).mode)) FS.mkdir(p);
      }
      const packed = pack instanceof ArrayBuffer ? pack : new ArrayBuffer(0);
      for (const { path, at, size } of files) {
        const p = checked(path);
        if (!Number.isSafeInteger(at) || !Number.isSafeInteger(size) || at < 0 || size < 0 || at + size > packed.byteLength) {
          throw new Error(`refused file from the harness: ${path} is not in the packed bytes`);
        }
        if (FS.analyzePath(p).exists && FS.isDir(FS.lstat(p).mode)) removeTree(FS, p);
        FS.writeFile(p, new Uint8Array(packed, at, size));
      }
    } finally {
      this.loading = false;
    }
    // What the sandbox now has is what the harness has: what the command does is new.
    this.touched.clear();
  }

  /** What the command changed in /work (after it): each touched path as it is now (a
   * folder with everything below it: it may have come whole, by a rename). */
  collect() {
    const FS = this.FS;
    /** @type {{dirs: string[], files: {path: string, data: Uint8Array}[], removed: string[], skipped: string[]}} */
    const changes = { dirs: [], files: [], removed: [], skipped: [] };
    const seen = new Set();
    const visit = (path) => {
      if (seen.has(path)) return;
      seen.add(path);
      let mode;
      try {
        mode = FS.lstat(path).mode;
      } catch {
        changes.removed.push(path);
        return;
      }
      if (FS.isDir(mode)) {
        changes.dirs.push(path);
        for (const name of FS.readdir(path)) if (name !== "." && name !== "..") visit(`${path}/${name}`);
      } else if (FS.isFile(mode)) {
        changes.files.push({ path, data: FS.readFile(path) });
      } else {
        // Not in the workspace, so not here either: the model is told once.
        changes.skipped.push(path);
        FS.unlink(path);
      }
    };
    const depth = (p) => p.split("/").length;
    for (const path of [...this.touched].sort((x, y) => depth(x) - depth(y) || (x < y ? -1 : 1))) {
      // Below a folder that is gone, or below a path that is not a folder: gone too.
      visit(path);
    }
    this.touched.clear();
    changes.dirs.sort((x, y) => depth(x) - depth(y));
    return changes;
  }
}

function checked(path) {
  const p = normalize(String(path));
  if (!belowWork(p)) throw new Error(`refused path from the harness: ${path}`);
  return p;
}

function removeTree(FS, path) {
  const at = FS.analyzePath(path);
  if (!at.exists && !isLink(FS, path)) return;
  const { mode } = FS.lstat(path);
  if (!FS.isDir(mode)) return void FS.unlink(path);
  for (const name of FS.readdir(path)) if (name !== "." && name !== "..") removeTree(FS, `${path}/${name}`);
  FS.rmdir(path);
}

function isLink(FS, path) {
  try {
    return FS.isLink(FS.lstat(path).mode);
  } catch {
    return false;
  }
}
