// The harness worker's boot (embed/worker/worker.mjs routes the page's `init` here):
// Pyodide from the bundle, the wheels, the workspace's store, then the Python session
// (harness/runtime/pyodide.py) with this worker's host, the object Python calls
// (`WorkerHost` below; its other half is harness/runtime/worker_host.py). Also the page
// calls the host makes for Python (page tools, approvals, the sandbox's network
// requests), and the jail's trust in the filesystem (watchLinks, whileTrusted).

import { beforeLinkPossible } from "../shared/fs-hooks.mjs";
import { createHttp } from "./http.mjs";
import { journalFeed } from "./journal.mjs";
import { openWorkspace } from "./persist.mjs";
import { bundlePackageIndex, createSandboxClient, installedStore } from "./sandbox-client.mjs";
import { createOutbox } from "./worker-outbox.mjs";

/**
 * What the worker's modules share, in one object (worker.mjs makes it, `boot` fills it
 * in, the page's messages read it): passed to each, never a module's global.
 * @typedef {object} WorkerState
 * @property {(message: any, transfer?: Transferable[]) => void} post to the page
 * @property {ReturnType<typeof createOutbox>} out replies and events, in order, each after a flush
 * @property {any} pyodide null until the runtime loaded
 * @property {any} bridge harness.runtime.pyodide.WorkerBridge, null until ready
 * @property {ReturnType<typeof createHttp> | null} http model requests through the page
 * @property {ReturnType<typeof createSandboxClient> | null} sandbox the sandbox's client, with the shell
 * @property {any} store the workspace's store (persist.mjs): OPFS write-through, or memory
 * @property {ReturnType<typeof journalFeed> | null} journal every change to /work, for harness/workspace/journal.py
 * @property {boolean} linksTrusted the jail skips realpath (watchLinks)
 * @property {((path: string) => any) | null} readablePath the real path of a workspace file, or undefined (fsops.readable_path)
 * @property {((path: string) => any) | null} writablePath where a writeFile goes, or undefined (fsops.writable_path)
 * @property {boolean} checkpointsOn the checkpoints option: a page tool call's changes get pre-images
 * @property {URL | null} bundleBase the bundle directory (its package index is pyodide/)
 * @property {Map<number, {resolve: (answer: PageToolAnswer) => void, cause: string}>} pageToolCalls waiting on the page
 * @property {Map<number, (answer: ApprovalAnswer) => void>} approvals waiting on the page's onApproval
 * @property {Map<number, (message: any) => void>} netCalls the sandbox's network requests waiting on the page
 * @property {{toolCall: number, approval: number, netCall: number}} next the next id of each kind of call
 */

/** A worker's state before `init`. @param {WorkerState["post"]} post @returns {WorkerState} */
export function createState(post) {
  /** @type {WorkerState} */
  const state = {
    post,
    out: createOutbox(post, () => state.store),
    pyodide: null,
    bridge: null,
    http: null,
    sandbox: null,
    store: null,
    journal: null,
    linksTrusted: false,
    readablePath: null,
    writablePath: null,
    checkpointsOn: true,
    bundleBase: null,
    pageToolCalls: new Map(),
    approvals: new Map(),
    netCalls: new Map(),
    next: { toolCall: 1, approval: 1, netCall: 1 },
  };
  return state;
}

class BootError extends Error {
  constructor(step, message) {
    super(message);
    this.step = step;
  }
}

/** The page's `init`: load Pyodide, the wheels and the harness, open the workspace, start
 * the session; `ready` or `boot_error` to the page.
 * @param {WorkerState} state @param {{baseUrl: string, config: any, storage: any}} init */
export async function boot(state, { baseUrl, config, storage }) {
  const { post } = state;
  if (state.pyodide !== null) return post({ type: "boot_error", step: "init", message: "already initialised" });
  const base = new URL(baseUrl, self.location.href);
  state.bundleBase = base;
  const started = performance.now();
  const progress = (step, state, extra = {}) =>
    post({ type: "progress", step, state, ms: Math.round(performance.now() - started), ...extra });
  try {
    const manifest = await step("manifest", progress, () => fetchJson(new URL("manifest.json", base)));
    const sizes = manifest.files || {};
    const bytesOf = (names) => names.reduce((n, f) => n + (sizes[f] || 0), 0);

    const core = ["pyodide/pyodide.mjs", "pyodide/pyodide.asm.mjs", "pyodide/pyodide.asm.wasm", "pyodide/python_stdlib.zip"];
    const pyodide = await step("runtime", progress, () => loadRuntime(base), bytesOf(core));
    state.pyodide = pyodide;

    // jsonschema validates page tools' arguments: loaded only when there are any.
    const extra = config?.pageTools?.length ? ["jsonschema"] : [];
    const wheels = [...(manifest.bootWheels || []), ...extra.flatMap((p) => manifest.optionalWheels?.[p] || [])];
    await step("packages", progress, () => loadPackages(pyodide, [...manifest.bootPackages, ...extra]), bytesOf(wheels));

    const where = storage && typeof storage === "object" ? storage : {};
    const store = await step("storage", progress, () =>
      openWorkspace(pyodide.FS, {
        kind: ["opfs", "memory"].includes(where.kind) ? where.kind : "auto",
        name: typeof where.name === "string" && where.name ? where.name.slice(0, 200) : "default",
        named: where.named === true,
        takeOver: where.takeOver === true,
      }),
    );
    state.store = store;
    // Another tab asked for this workspace: write what is queued, tell the page (which
    // ends this worker and with it the lock).
    store.onTakeover = () =>
      state.out.enqueue(async () => {
        const failure = store.dirty() ? await store.flush() : null;
        post({ type: "workspace_taken", saved: failure === null });
      });
    const bridge = await step("harness", progress, () => startHarness(state, config, manifest));
    state.bridge = bridge;
    watchLinks(pyodide.FS, bridge.session.workspace, state);
    const fsops = pyodide.pyimport("harness.workspace.fsops");
    state.readablePath = whileTrusted(
      pyodide.pyimport("functools").partial(fsops.readable_path, bridge.session.workspace),
      () => state.linksTrusted,
    );
    state.writablePath = pyodide.pyimport("functools").partial(fsops.writable_path, bridge.session.workspace);
    post({
      type: "ready",
      // Measured, not assumed: with its own CSP (docs/security.md) this worker may fetch
      // nothing but its own origin, and a data: URL is refused without any traffic.
      workerCsp: await fetch("data:,probe").then(
        () => false,
        () => true,
      ),
      versions: { pyharness: manifest.pyharness, pyodide: pyodide.version },
      storage: {
        kind: store.kind,
        workspace: store.name,
        restoredFiles: store.restored,
        ...(store.reason ? { reason: store.reason } : {}),
      },
      tools: JSON.parse(bridge.tool_specs()),
    });
  } catch (err) {
    const step = err instanceof BootError ? err.step : "boot";
    post({ type: "boot_error", step, message: err instanceof Error ? err.message : String(err) });
  }
}

async function step(name, progress, fn, bytes) {
  progress(name, "start", bytes ? { bytes } : {});
  try {
    const value = await fn();
    progress(name, "done", bytes ? { bytes } : {});
    return value;
  } catch (err) {
    if (err instanceof BootError) throw err;
    throw new BootError(name, err instanceof Error ? err.message : String(err));
  }
}

async function fetchJson(url) {
  const response = await fetch(url);
  if (!response.ok) {
    throw new Error(`GET ${url} answered ${response.status}; serve the directory made by \`pyharness build\` and check the baseUrl option`);
  }
  return response.json();
}

async function loadRuntime(base) {
  const indexURL = new URL("pyodide/", base).href;
  let mod;
  try {
    mod = await import(new URL("pyodide.mjs", indexURL).href);
  } catch (err) {
    throw new Error(`could not import ${indexURL}pyodide.mjs (${err.message}); the bundle is incomplete or baseUrl is wrong`);
  }
  // lockFileURL must be absolute, or every package load fails.
  return mod.loadPyodide({
    indexURL,
    lockFileURL: new URL("pyodide-lock.json", indexURL).href,
    packageBaseUrl: indexURL,
    fullStdLib: false,
    stdout: (line) => console.log(`[pyharness] ${line}`),
    stderr: (line) => console.warn(`[pyharness] ${line}`),
  });
}

async function loadPackages(pyodide, names) {
  const errors = [];
  // loadPackage does not throw when a download fails: collect its errors, then check.
  await pyodide.loadPackage(names, {
    messageCallback: () => {},
    errorCallback: (message) => errors.push(message),
  });
  try {
    pyodide.pyimport("harness.runtime.pyodide").destroy(); // imports pydantic too
  } catch (err) {
    const why = errors.length ? errors.join("; ") : err.message;
    throw new Error(`the harness wheels did not load (${why}); rebuild the bundle with \`pyharness build\` and serve all of it`);
  }
}

/**
 * The object this worker hands to Python (harness.runtime.pyodide.start): every member
 * Python calls, by name. The other half is the Protocol `WorkerHost` in
 * harness/runtime/worker_host.py; tests/test_worker_host.py holds the two to the same
 * members.
 * @typedef {object} WorkerHost
 * @property {ReturnType<typeof createHttp>} http model requests, through the page's fetch
 * @property {ReturnType<typeof journalFeed>} journal every change to /work (harness/workspace/journal.py)
 * @property {(name: string, inputJson: string) => PendingCall<PageToolAnswer>} callPageTool run a page tool
 * @property {(id: number) => void} cancelPageTool abort it on the page, drop its answer
 * @property {(requestJson: string) => PendingCall<ApprovalAnswer>} askApproval ask the page's onApproval
 * @property {(id: number) => void} cancelApproval abort onApproval, drop its answer
 * @property {string[]} shellCommands the commands the build's just-bash has
 * @property {[string, string][]} shellPackages what the bundle's package index ships, [name, version]
 * @property {() => ReturnType<typeof createSandboxClient>} sandbox make the sandbox's client (once, with the shell)
 * @property {() => void} runEnded a run ended: a sandbox that ran its code is replaced (Runtime.run_ended)
 */
/** @template T @typedef {{id: number, promise: Promise<T>}} PendingCall a question to the page */
/** @typedef {{ok: boolean, output: string, images: string}} PageToolAnswer images: JSON [{mediaType, data}] */
/** @typedef {{decision: string, message?: string}} ApprovalAnswer */

/** Start the session (harness.runtime.pyodide.start) with this worker's host.
 * @param {WorkerState} state @param {any} config @param {any} manifest */
function startHarness(state, config, manifest) {
  const { pyodide, post } = state;
  const entry = pyodide.pyimport("harness.runtime.pyodide");
  state.checkpointsOn = config?.checkpoints !== false;
  const shipped = (manifest.packages || []).map((p) => [String(p.name), String(p.version)]);
  // Model requests always go out through the page, which alone holds the credentials.
  const http = createHttp(post);
  state.http = http;
  // From here on every change to /work is in the journal (the restored files are not
  // changes: they are where the journal starts).
  const journal = journalFeed(pyodide.FS);
  state.journal = journal;
  /** @type {WorkerHost} */
  const host = {
    http,
    journal,
    callPageTool: (name, inputJson) => callPageTool(state, name, inputJson),
    cancelPageTool: (id) => cancelPageTool(state, id),
    askApproval: (requestJson) => askApproval(state, requestJson),
    cancelApproval: (id) => cancelApproval(state, id),
    // The shell, asked for by the session only when the page turned it on: its commands
    // run in the sandbox, which the page starts once we are ready (sandbox_port).
    shellCommands: manifest.shellCommands || [],
    // What the bundle's package index ships (pyharness build --package), [name, version].
    shellPackages: shipped,
    sandbox: () =>
      (state.sandbox = createSandboxClient({
        restart: (reason, generation) => post({ type: "sandbox_restart", reason, generation }),
        netFetch: (request, command) => netFetch(state, request, command),
        packageFile: bundlePackageIndex(state.bundleBase, fetchJson),
        packages: { available: shipped, ...installedStore(pyodide.FS) },
        // The page keeps the hard deadline too, on a clock the sandbox cannot delay.
        commandStarted: ({ generation, nonce, ms }) => post({ type: "sandbox_deadline", generation, command: nonce, ms }),
        commandEnded: ({ generation, nonce }) => post({ type: "sandbox_done", generation, command: nonce }),
        dropped: (code, message) => post({ type: "sandbox_dropped", code, message }),
      })),
    // No sandbox state outlives a run: the sandbox that ran its code is replaced now.
    runEnded: () => void state.sandbox?.recycle(),
  };
  try {
    // Events only keep their order here: the sandbox's lifetime is told apart (runEnded).
    return entry.start(JSON.stringify(config ?? {}), (json) => state.out.event(JSON.parse(json)), host);
  } catch (err) {
    throw new Error(pythonMessage(err));
  } finally {
    entry.destroy();
  }
}

/** The jail resolves each path with realpath only while a symlink could be under /work
 * (Workspace.trust_no_symlinks in harness/workspace/jail.py): a symlink can get there only through
 * these functions of the filesystem, and each takes the trust back before it acts.
 * Conservative: any symlink or mount anywhere, or a move into /work from elsewhere.
 * `trust.linksTrusted` says whether the trust holds. (Exported for the in-Pyodide
 * tests, tests/test_jail.py.) @param {any} FS @param {any} workspace
 * @param {{linksTrusted: boolean}} [trust] */
export function watchLinks(FS, workspace, trust = { linksTrusted: false }) {
  if (!workspace.trust_no_symlinks()) return void workspace.destroy();
  trust.linksTrusted = true;
  beforeLinkPossible(FS, () => {
    if (!trust.linksTrusted) return;
    trust.linksTrusted = false;
    workspace.symlinks_possible();
    workspace.destroy();
  });
}

/** The jail's answer for a readFile path (fsops.readable_path), asked of Python once per
 * path while no symlink can be under /work: Workspace.resolve then neither reads the
 * filesystem nor depends on it (no realpath), so its answer is a function of the path
 * string and cannot change. Without that trust, asked every time. The memo holds at most
 * `limit` paths. (Exported for the in-Pyodide tests, tests/test_jail.py.) */
export function whileTrusted(decide, trusted, limit = 4096) {
  const memo = new Map();
  return (path) => {
    if (!trusted()) {
      memo.clear();
      return decide(path);
    }
    if (memo.has(path)) return memo.get(path);
    const answer = decide(path);
    if (memo.size >= limit) memo.clear();
    memo.set(path, answer);
    return answer;
  };
}

/** The last line of a Python traceback: "UsageError: invalid option 'model': ..." */
export function pythonMessage(err) {
  const lines = String(err?.message ? err.message : err)
    .trim()
    .split("\n");
  return lines[lines.length - 1];
}

// ---------------------------------------------------------------------------
// What the host asks of the page for Python

/** Ask the page for one network request of the model's code (the page checks it, and
 * aborts every request of `command` when its sandbox_done arrives). */
function netFetch(state, request, command) {
  const id = state.next.netCall++;
  return new Promise((resolve) => {
    state.netCalls.set(id, ({ type, id: _, ...answer }) => resolve(answer));
    state.post({ type: "netfetch", id, command, ...request }, request.body instanceof ArrayBuffer ? [request.body] : []);
  });
}

/** Ask the page to run one of its tools; Python awaits `promise` ({ok, output}).
 * @param {WorkerState} state @param {string} name @param {string} inputJson
 * @returns {PendingCall<PageToolAnswer>} */
function callPageTool(state, name, inputJson) {
  const id = state.next.toolCall++;
  // The tool call's cause in the journal (Python set it): what the tool changes through
  // its fs is that call's change.
  const cause = state.journal?.cause ?? "";
  const promise = new Promise((resolve) => state.pageToolCalls.set(id, { resolve, cause }));
  state.post({ type: "toolcall", id, name, input: inputJson });
  return { id, promise };
}

/** The run was cancelled or the tool timed out: abort it on the page, drop its answer. */
function cancelPageTool(state, id) {
  if (state.pageToolCalls.delete(id)) state.post({ type: "toolcancel", id });
}

/** Ask the page's onApproval about one call (harness/policy/approvals.py); Python awaits
 * `promise` ({decision, message}). Queued behind the run's events, so the page has the
 * approval_request event before it is asked.
 * @param {WorkerState} state @param {string} requestJson @returns {PendingCall<ApprovalAnswer>} */
function askApproval(state, requestJson) {
  const id = state.next.approval++;
  const promise = new Promise((resolve) => state.approvals.set(id, resolve));
  const request = JSON.parse(requestJson);
  state.out.enqueue(() => state.post({ type: "approval", id, request }));
  return { id, promise };
}

/** The approval timed out or its run was cancelled: abort onApproval, drop its answer. */
function cancelApproval(state, id) {
  if (state.approvals.delete(id)) state.out.enqueue(() => state.post({ type: "approvalcancel", id }));
}
