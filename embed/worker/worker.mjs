// The module worker: boots Pyodide from the bundle, loads the wheels and the harness,
// then routes page messages to the Python session (harness/runtime/pyodide.py). It runs
// only our code: the model's commands run in the sandbox (sandbox-client.mjs), and its
// model requests go out through the page, which holds the key. Message shapes are
// documented in docs/protocol.md.

import { createHttp } from "./http.mjs";
import { beforeLinkPossible } from "../shared/fs-hooks.mjs";
import { openWorkspace } from "./persist.mjs";
import { CODE, fsRequest as wellFormed, receiver } from "../shared/protocol.mjs";
import { journalFeed } from "./journal.mjs";
import { bundlePackageIndex, createSandboxClient, installedStore } from "./sandbox-client.mjs";

/** @type {any} */ let pyodide = null;
/** @type {any} */ let bridge = null;
/** @type {ReturnType<typeof createHttp> | null} */ let http = null;
/** @type {ReturnType<typeof createSandboxClient> | null} */ let sandbox = null;
/** The workspace's store (persist.mjs): OPFS write-through, or memory. */ let store = null;
/** @type {ReturnType<typeof journalFeed> | null} every change to /work, for harness/workspace/journal.py */ let journal = null;
let linksTrusted = false; // the jail skips realpath (watchLinks)
/** (path) → the real path of a workspace file, or undefined (fsops.readable_path) */ let readablePath = null;
/** (path) → where a writeFile goes, or undefined (fsops.writable_path) */ let writablePath = null;
let outgoing = Promise.resolve(); // replies and events leave in order, after a flush
const pageToolCalls = new Map(); // id → {resolve, cause}, for calls waiting on the page
let nextToolCall = 1;
let checkpointsOn = true; // the checkpoints option: a page tool call's changes get pre-images
const approvals = new Map(); // id → resolve, for calls waiting on the page's onApproval
let nextApproval = 1;
const netCalls = new Map(); // id → resolve, for the sandbox's network requests
let bundleBase = null; // URL of the bundle directory (its package index is pyodide/)
let nextNetCall = 1;

const post = (message, transfer = []) => self.postMessage(message, transfer);

/** What the page may send (embed/shared/protocol.mjs, pageToWorker), and what each does. */
const FROM_PAGE = receiver(
  "pageToWorker",
  {
    init: (_, message) => void boot(message),
    fs: (_, message) => fsRequest(message),
    threads: (_, message) => threadsRequest(message), // JSON in, JSON out; the reply leaves after the flush
    checkpoint: (_, message) => threadsRequest(message, "checkpoint"),
    prompt: (_, { runId, text, attachments }) => bridge.prompt(runId, text, JSON.stringify(attachments ?? [])),
    cancel: (_, { runId }) => void bridge?.cancel(runId),
    fetch_head: (_, message) => http.onPageMessage(message),
    fetch_chunk: (_, message) => http.onPageMessage(message),
    fetch_end: (_, message) => http.onPageMessage(message),
    fetch_error: (_, message) => http.onPageMessage(message),
    toolres: (_, message) => toolResult(message),
    approvalres: (_, { id, decision, message }) => {
      const resolve = approvals.get(id);
      approvals.delete(id);
      resolve({ decision, message });
    },
    // a fresh sandbox from the page (at ready, after a restart or its deadline)
    sandbox_port: (_, { port, generation, reason }) => void sandbox.attach(port, generation, reason),
    netres: (_, message) => {
      // the page's answer to a network request of the model's code
      const resolve = netCalls.get(message.id);
      netCalls.delete(message.id);
      resolve(message);
    },
    // a raw round trip, the baseline of the benchmarks
    echo: (_, { id, data }) => post({ type: "echo", id, data }, data ? [data] : []),
    stats: (_, { id }) =>
      // diagnostics: the worker's memory (`pyharness bench`)
      post({
        type: "echo",
        id,
        wasmBytes: pyodide ? pyodide._module.HEAPU8.buffer.byteLength : 0,
        jsHeapBytes: /** @type {any} Chromium's, not standard */ (performance).memory?.usedJSHeapSize ?? null,
        linksTrusted,
      }),
  },
  {
    ready: () => bridge !== null,
    toolPending: (_, { id }) => pageToolCalls.has(id),
    approvalPending: (_, { id }) => approvals.has(id),
    fetchOpen: (_, { id }) => http?.isOpen(id) === true,
    shell: () => sandbox !== null,
    netPending: (_, { id }) => netCalls.has(id),
  },
);

/** A message the worker cannot use: the page hears why (a quiet code: a late answer). */
function dropped({ code, reason }, message) {
  if (code === null) return;
  const about = message !== null && typeof message === "object" ? message : {};
  post({ type: "protocol_error", code, id: about.id, runId: typeof about.runId === "string" ? about.runId : undefined, message: reason });
}

self.onmessage = (event) => {
  const message = event.data;
  try {
    FROM_PAGE.receive(undefined, message, dropped);
  } catch (err) {
    dropped({ code: CODE.RECEIVER_FAILED, reason: `worker failed on '${message.type}': ${err}` }, message);
  }
};

// ---------------------------------------------------------------------------
// Boot

class BootError extends Error {
  constructor(step, message) {
    super(message);
    this.step = step;
  }
}

async function boot({ baseUrl, config, storage }) {
  if (pyodide !== null) return post({ type: "boot_error", step: "init", message: "already initialised" });
  const base = new URL(baseUrl, self.location.href);
  bundleBase = base;
  const started = performance.now();
  const progress = (step, state, extra = {}) =>
    post({ type: "progress", step, state, ms: Math.round(performance.now() - started), ...extra });
  try {
    const manifest = await step("manifest", progress, () => fetchJson(new URL("manifest.json", base)));
    const sizes = manifest.files || {};
    const bytesOf = (names) => names.reduce((n, f) => n + (sizes[f] || 0), 0);

    const core = ["pyodide/pyodide.mjs", "pyodide/pyodide.asm.mjs", "pyodide/pyodide.asm.wasm", "pyodide/python_stdlib.zip"];
    pyodide = await step("runtime", progress, () => loadRuntime(base), bytesOf(core));

    // jsonschema validates page tools' arguments: loaded only when there are any.
    const extra = config?.pageTools?.length ? ["jsonschema"] : [];
    const wheels = [...(manifest.bootWheels || []), ...extra.flatMap((p) => manifest.optionalWheels?.[p] || [])];
    await step("packages", progress, () => loadPackages([...manifest.bootPackages, ...extra]), bytesOf(wheels));

    const where = storage && typeof storage === "object" ? storage : {};
    store = await step("storage", progress, () =>
      openWorkspace(pyodide.FS, {
        kind: ["opfs", "memory"].includes(where.kind) ? where.kind : "auto",
        name: typeof where.name === "string" && where.name ? where.name.slice(0, 200) : "default",
        named: where.named === true,
        takeOver: where.takeOver === true,
      }),
    );
    // Another tab asked for this workspace: write what is queued, tell the page (which
    // ends this worker and with it the lock).
    store.onTakeover = () =>
      enqueue(async () => {
        const failure = store.dirty() ? await store.flush() : null;
        post({ type: "workspace_taken", saved: failure === null });
      });
    bridge = await step("harness", progress, () => startHarness(config, manifest));
    watchLinks(pyodide.FS, bridge.session.workspace);
    const fsops = pyodide.pyimport("harness.workspace.fsops");
    readablePath = whileTrusted(pyodide.pyimport("functools").partial(fsops.readable_path, bridge.session.workspace), () => linksTrusted);
    writablePath = pyodide.pyimport("functools").partial(fsops.writable_path, bridge.session.workspace);
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

async function loadPackages(names) {
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

function startHarness(config, manifest) {
  const entry = pyodide.pyimport("harness.runtime.pyodide");
  checkpointsOn = config?.checkpoints !== false;
  const shipped = (manifest.packages || []).map((p) => [String(p.name), String(p.version)]);
  // Model requests always go out through the page, which alone holds the credentials.
  http = createHttp(post);
  // From here on every change to /work is in the journal (the restored files are not
  // changes: they are where the journal starts).
  journal = journalFeed(pyodide.FS);
  /** @type {WorkerHost} */
  const host = {
    http,
    journal,
    callPageTool,
    cancelPageTool,
    askApproval,
    cancelApproval,
    // The shell, asked for by the session only when the page turned it on: its commands
    // run in the sandbox, which the page starts once we are ready (sandbox_port).
    shellCommands: manifest.shellCommands || [],
    // What the bundle's package index ships (pyharness build --package), [name, version].
    shellPackages: shipped,
    sandbox: () =>
      (sandbox = createSandboxClient({
        restart: (reason, generation) => post({ type: "sandbox_restart", reason, generation }),
        netFetch,
        packageFile: bundlePackageIndex(bundleBase, fetchJson),
        packages: { available: shipped, ...installedStore(pyodide.FS) },
        // The page keeps the hard deadline too, on a clock the sandbox cannot delay.
        commandStarted: ({ generation, nonce, ms }) => post({ type: "sandbox_deadline", generation, command: nonce, ms }),
        commandEnded: ({ generation, nonce }) => post({ type: "sandbox_done", generation, command: nonce }),
        dropped: (code, message) => post({ type: "sandbox_dropped", code, message }),
      })),
    // No sandbox state outlives a run: the sandbox that ran its code is replaced now.
    runEnded: () => void sandbox?.recycle(),
  };
  try {
    return entry.start(JSON.stringify(config ?? {}), (json) => postEvent(JSON.parse(json)), host);
  } catch (err) {
    throw new Error(pythonMessage(err));
  } finally {
    entry.destroy();
  }
}

// For the in-Pyodide tests (tests/test_journal.py): the journal's feed over their FS.
export { journalFeed };

/** The jail resolves each path with realpath only while a symlink could be under /work
 * (Workspace.trust_no_symlinks in harness/workspace/jail.py): a symlink can get there only through
 * these functions of the filesystem, and each takes the trust back before it acts.
 * Conservative: any symlink or mount anywhere, or a move into /work from elsewhere.
 * (Exported for the in-Pyodide tests, tests/test_jail.py.) */
export function watchLinks(FS, workspace) {
  if (!workspace.trust_no_symlinks()) return void workspace.destroy();
  linksTrusted = true;
  beforeLinkPossible(FS, () => {
    if (!linksTrusted) return;
    linksTrusted = false;
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
function pythonMessage(err) {
  const lines = String(err?.message ? err.message : err)
    .trim()
    .split("\n");
  return lines[lines.length - 1];
}

// ---------------------------------------------------------------------------
// h.fs and runs

/** After a change, nothing leaves before the change is on disk (the durability
 * contract): replies and events go out in order, each after any pending flush. */
function afterFlush(send) {
  enqueue(async () => {
    const failure = store?.dirty() ? await store.flush() : null;
    reportStorage(failure);
    send(failure);
  });
}

/** Tell the page when saving to OPFS starts failing (h.storage.error) and when it works
 * again; the changes stay in the session and are retried at every later flush. */
let storageFailure = null;
function reportStorage(failure) {
  if (store?.kind !== "opfs" || (failure === null && (storageFailure === null || store.dirty()))) return;
  if (failure?.code === storageFailure?.code) return;
  storageFailure = failure;
  post({ type: "storage", error: failure });
}

/** A reply to a call that changed files which could not all be saved: the call fails
 * with the storage's code (its change is kept in the session and retried). */
function unsaved(reply, failure, changed) {
  if (failure === null || !changed || reply.ok === false) return reply;
  return {
    ...reply,
    ok: false,
    code: failure.code,
    message: `${failure.code}: the change was made in this session but could not be saved: ${failure.message}`,
    data: undefined,
    value: undefined,
  };
}

function enqueue(fn) {
  changeBatch = null; // a file change after this message goes after it
  outgoing = outgoing.then(fn).catch((err) => console.error("pyharness: could not send a reply", err));
}

/** file_change events waiting to go in one `file_changes` message (null: none open). A
 * command that changes 10,000 files is a few messages, not 10,000: the page's thread
 * pays per message. The batch closes when its turn comes (it is then flushed and sent)
 * or when any other message is queued (a later change goes after that message). */
let changeBatch = null;
const MAX_CHANGES_PER_MESSAGE = 500;

function postFileChange(event) {
  if (changeBatch === null) {
    const batch = [];
    enqueue(async () => {
      if (changeBatch === batch) changeBatch = null; // what comes from now on: a new batch
      const failure = store?.dirty() ? await store.flush() : null;
      reportStorage(failure);
      post({ type: "file_changes", events: batch });
    });
    changeBatch = batch;
  }
  changeBatch.push(event);
  // A bounded message: the page handles each one in a task, and its timers run between.
  if (changeBatch.length >= MAX_CHANGES_PER_MESSAGE) changeBatch = null;
}

function postEvent(event) {
  // Only tool_end and run_end promise durability; the rest only keep their order.
  // Until the session calls Runtime.run_ended (host.runEnded) at each run's end, its
  // run_end recycles the sandbox here too (recycle does nothing twice).
  if (event.type === "run_end") sandbox?.recycle();
  // A file_change is not a run's numbered event (it also comes of page calls): its own
  // message (batched), sent once the change is saved, before the reply or tool_end it
  // goes with.
  if (event.type === "file_change") postFileChange(event);
  else if (event.type === "tool_end" || event.type === "run_end") afterFlush(() => post({ type: "event", event }));
  else enqueue(() => post({ type: "event", event }));
}

/** An h.threads call, or (`kind` "checkpoint") an h.revert / h.diff call: JSON in, JSON
 * out, the reply after what it changed is on disk (and after a revert's file_change events). */
function threadsRequest({ id, request }, kind = "threads") {
  const before = store?.changes;
  let reply;
  if (bridge === null) reply = { ok: false, code: "EINVAL", message: "EINVAL: the harness is not ready" };
  else {
    try {
      reply = JSON.parse(kind === "checkpoint" ? bridge.checkpoint(request) : bridge.threads(request));
    } catch (err) {
      reply = { ok: false, code: "EIO", message: `EIO: ${pythonMessage(err)}` };
    }
  }
  const changed = store?.changes !== before;
  afterFlush((failure) => post(unsaved({ type: `${kind}res`, id, ...reply }, failure, changed)));
}

function fsRequest(message) {
  const before = store?.changes;
  // What this call changes is the page's doing (harness/workspace/journal.py's cause).
  // (a page tool's call through its fs: that tool call's, announced when the call ends)
  const cause = journal?.cause ?? "";
  const captured = journal?.capture ?? false;
  const ofCall = message.call === undefined ? undefined : pageToolCalls.get(message.call)?.cause || undefined;
  // (a page tool call's changes are its run's: their pre-images go to its checkpoint)
  journal?.setCause(ofCall ?? pageCause(message), ofCall !== undefined && checkpointsOn);
  let reply;
  let transfer;
  try {
    // The fast paths take a request only when it is well-formed by the protocol's table
    // (FS_REQUESTS, pinned to fsops.py's models); anything else goes to Python.
    const fast = readFileReply(message) ?? writeFileReply(message);
    [reply, transfer] = fast ?? fsReply(message, ofCall !== undefined);
    if (fast && reply.ok && reply.value === null && ofCall === undefined) bridge?.announce(journal?.cause); // a written file
  } finally {
    journal?.setCause(cause, captured);
  }
  const changed = store?.changes !== before;
  afterFlush((failure) => {
    const sent = unsaved(reply, failure, changed);
    post(sent, sent === reply ? transfer : undefined);
  });
}

/** "page:<op>:<id>", the journal's cause for one h.fs call. */
function pageCause({ id, request }) {
  const op = typeof request === "string" ? /"op"\s*:\s*"(\w{1,20})"/.exec(request.slice(0, 200))?.[1] : undefined;
  return `page:${op ?? "fs"}:${id}`;
}

/** The hot path of h.fs: a plain readFile. The jail (Python) says where the file is and
 * the filesystem's readFile copies its bytes once, straight into the buffer the reply
 * transfers. Anything else, or any failure, returns undefined: then the request takes
 * the full path (fsReply), whose parser and error are the answer. */
function readFileReply({ id, request }) {
  if (readablePath === null || typeof request !== "string" || request.length > 4096 || !request.includes('"readFile"')) return undefined;
  try {
    const req = wellFormed(JSON.parse(request));
    if (req?.op !== "readFile") return undefined;
    const real = readablePath(req.path);
    if (typeof real !== "string") return undefined;
    const bytes = pyodide.FS.readFile(real);
    const buffer = bytes.byteLength === bytes.buffer.byteLength ? bytes.buffer : bytes.slice().buffer;
    return [{ type: "fsres", id, ok: true, data: buffer }, [buffer]];
  } catch {
    return undefined; // a directory, a missing file, ...: the full path explains it
  }
}

/** The other hot path: a plain writeFile. The jail (Python) says where it goes; the
 * filesystem takes the transferred buffer over (canOwn) instead of copying it into
 * Python and out again. Anything else, or any failure, returns undefined: then the
 * request takes the full path (fsReply), whose error is the answer. */
function writeFileReply({ id, request, data }) {
  if (
    writablePath === null
    || !(data instanceof ArrayBuffer)
    || typeof request !== "string"
    || request.length > 4096
    || !request.includes('"writeFile"')
  )
    return undefined;
  let real;
  try {
    const req = wellFormed(JSON.parse(request));
    if (req?.op !== "writeFile" || req.append !== false) return undefined;
    real = writablePath(req.path);
  } catch {
    return undefined;
  }
  if (typeof real !== "string") return undefined;
  const FS = pyodide.FS;
  // An existing file keeps its mode (as write_file does); a new one is 0644.
  try {
    FS.writeFile(real, new Uint8Array(data), { canOwn: true, mode: 0o644 });
  } catch {
    return undefined;
  }
  return [{ type: "fsres", id, ok: true, value: null }];
}

function fsReply({ id, request, data }, ofCall = false) {
  if (bridge === null) return [{ type: "fsres", id, ok: false, code: "EINVAL", message: "EINVAL: the harness is not ready" }];
  let result;
  try {
    result = bridge.fs(request, data instanceof ArrayBuffer ? new Uint8Array(data) : undefined, journal?.cause, ofCall);
  } catch (err) {
    return [{ type: "fsres", id, ok: false, code: "EIO", message: `EIO: ${pythonMessage(err)}` }];
  }
  if (typeof result === "string") return [{ type: "fsres", id, ...JSON.parse(result) }];
  const bytes = result.toJs();
  result.destroy();
  return [{ type: "fsres", id, ok: true, data: bytes.buffer }, [bytes.buffer]];
}

/** Ask the page for one network request of the model's code (the page checks it, and
 * aborts every request of `command` when its sandbox_done arrives). */
function netFetch(request, command) {
  const id = nextNetCall++;
  return new Promise((resolve) => {
    netCalls.set(id, ({ type, id: _, ...answer }) => resolve(answer));
    post({ type: "netfetch", id, command, ...request });
  });
}

/** Ask the page to run one of its tools; Python awaits `promise` ({ok, output}).
 * @param {string} name @param {string} inputJson @returns {PendingCall<PageToolAnswer>} */
function callPageTool(name, inputJson) {
  const id = nextToolCall++;
  // The tool call's cause in the journal (Python set it): what the tool changes through
  // its fs is that call's change.
  const cause = journal?.cause ?? "";
  const promise = new Promise((resolve) => pageToolCalls.set(id, { resolve, cause }));
  post({ type: "toolcall", id, name, input: inputJson });
  return { id, promise };
}

/** The run was cancelled or the tool timed out: abort it on the page, drop its answer. */
function cancelPageTool(id) {
  if (pageToolCalls.delete(id)) post({ type: "toolcancel", id });
}

/** Ask the page's onApproval about one call (harness/policy/approvals.py); Python awaits
 * `promise` ({decision, message}). Queued behind the run's events, so the page has the
 * approval_request event before it is asked.
 * @param {string} requestJson @returns {PendingCall<ApprovalAnswer>} */
function askApproval(requestJson) {
  const id = nextApproval++;
  const promise = new Promise((resolve) => approvals.set(id, resolve));
  const request = JSON.parse(requestJson);
  enqueue(() => post({ type: "approval", id, request }));
  return { id, promise };
}

/** The approval timed out or its run was cancelled: abort onApproval, drop its answer. */
function cancelApproval(id) {
  if (approvals.delete(id)) enqueue(() => post({ type: "approvalcancel", id }));
}

function toolResult({ id, ok, output, images }) {
  const { resolve } = pageToolCalls.get(id);
  pageToolCalls.delete(id);
  resolve({ ok, output, images: JSON.stringify(Array.isArray(images) ? images : []) });
}
