// pyharness page API: createHarness() starts the module worker and gives h.fs, runs
// and events. Public types: pyharness.d.ts. Worker messages: docs/protocol.md.
//
// The page is the authority and trusts no message it did not expect: the model's
// credentials never leave this module (the worker asks us to make its model requests),
// every message from the worker is checked against what is pending, and the shell runs
// in a sandbox that only the page can start and kill (sandbox-host.mjs).
import { checkAttachments, writeAttachments } from "./attachments.mjs";
import { checkMcpOption, connectMcp } from "./mcp.mjs";
import { agentNetwork, checkNetworkOption, checkPackagesOption, createNetwork } from "./network.mjs";
import { deleteWorkspace, listWorkspaces } from "./workspaces.mjs";
import { CODE, PAGE_SANDBOX, receiver } from "../shared/protocol.mjs";
import { SandboxHost } from "./sandbox-host.mjs";
import { HarnessError } from "./errors.mjs";
import { startWorker } from "./worker-start.mjs";
import { PageApprovals } from "./approvals.mjs";
import { pageToolSpecs, serializableConfig, splitSecrets } from "./options.mjs";
import { PageHost } from "./page-host.mjs";
import { Preview } from "./preview.mjs";
import { Run } from "./run.mjs";
import { FileSystem } from "./fs-client.mjs";

export { deleteWorkspace, HarnessError, listWorkspaces };

/** @typedef {{resolve: () => void, reject: (error: Error) => void, onProgress?: (progress: import("./pyharness.d.ts").BootProgress) => void}} Booting */
/** @typedef {{resolve: Function, reject: Function, op: string}} Pending */

/**
 * Start a harness: one module worker running Pyodide and the Python agent.
 * @param {import("./pyharness.d.ts").HarnessOptions} options
 * @returns {Promise<import("./pyharness.d.ts").Harness>}
 */
export async function createHarness(options) {
  const {
    baseUrl,
    onProgress,
    onDiagnostic,
    signal,
    tools = [],
    fetch: pageFetch,
    storage = "auto",
    workspace = `page:${globalThis.location?.pathname ?? "/"}`,
    takeOver = false,
    onApproval,
    mcp,
    ...rest
  } = options ?? {};
  const named = options?.workspace !== undefined;
  if (!["auto", "opfs", "memory"].includes(storage)) throw new HarnessError("EINVAL", 'EINVAL: storage must be "opfs", "memory" or "auto"');
  if (typeof workspace !== "string" || workspace.length === 0 || workspace.length > 200) {
    throw new HarnessError("EINVAL", "EINVAL: workspace must be a name of 1 to 200 characters");
  }
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw new HarnessError("EINVAL", "EINVAL: signal must be an AbortSignal");
  if (signal?.aborted) throw new HarnessError("ECANCELED", "ECANCELED: createHarness was aborted (its signal)");
  if (pageFetch !== undefined && typeof pageFetch !== "function") {
    throw new HarnessError("EINVAL", "EINVAL: the fetch option must be a function like window.fetch");
  }
  const mcpProblem = checkMcpOption(mcp);
  if (mcpProblem !== null) throw new HarnessError("EINVAL", `EINVAL: ${mcpProblem}`);
  pageToolSpecs(tools); // checked before any server is asked
  // git.auth stays on the page (network.mjs adds its answer to a remote's requests).
  const gitAuth = rest.git?.auth ?? null;
  if (gitAuth !== null && typeof gitAuth !== "function")
    throw new HarnessError("EINVAL", "EINVAL: git.auth must be a function (url) => ({username, password} | {headers})");
  if (rest.git) rest.git = Object.fromEntries(Object.entries(rest.git).filter(([k]) => k !== "auth"));
  const { config, credentials } = splitSecrets(rest);
  const thePageFetch = pageFetch ?? globalThis.fetch.bind(globalThis);
  // MCP servers stay on the page (their headers too): the worker gets their tools as
  // page tools. Each has CONNECT_TIMEOUT_MS to answer; one that does not is left out.
  const servers = await connectMcp(
    mcp,
    thePageFetch,
    tools.map((t) => t.name),
  );
  const allTools = [...tools, ...servers.tools];
  // A rule for a tool of a server that is not there now would fail the boot: it goes
  // (the server's tools are not there to call either).
  if (config.permissions && typeof config.permissions === "object") {
    const exposed = new Set(servers.tools.map((t) => t.name));
    const prefixes = (mcp ?? []).map((m) => `${m.name}__`);
    config.permissions = { ...config.permissions }; // the page's own object stays as it was
    for (const key of Object.keys(config.permissions)) {
      if (prefixes.some((p) => key.startsWith(p)) && !exposed.has(key)) delete config.permissions[key];
    }
  }
  config.pageTools = pageToolSpecs(allTools);
  const plain = serializableConfig(config);
  const networkProblem = checkNetworkOption(plain.network) ?? checkPackagesOption(plain.packages);
  if (networkProblem !== null) throw new HarnessError("EINVAL", `EINVAL: ${networkProblem}`);
  // network.headers stay on the page: the worker (and so the model) never sees them.
  const originHeaders = plain.network?.headers ?? {};
  if (plain.network) delete plain.network.headers;
  const base = new URL(baseUrl ?? "./", import.meta.url);
  // A refused start throws EBOOT, with the cause and the fix (worker-start.mjs).
  const started = startWorker(new URL("worker.mjs", base), { shell: Boolean(plain.shell) });
  const harness = new Harness(started, onDiagnostic);
  const network = createNetwork(agentNetwork(plain.network, plain.packages), originHeaders, undefined, {
    auth: gitAuth,
    corsProxy: plain.git?.corsProxy ?? null,
  });
  harness._host = new PageHost(harness, allTools, thePageFetch, credentials, network);
  harness.mcp = servers.status;
  for (const server of servers.status) {
    if (server.status === "failed") harness._diagnose(CODE.MCP_UNAVAILABLE, `MCP server ${server.name} (${server.url}): ${server.error}`);
    for (const { tool, why } of server.leftOut ?? []) {
      harness._diagnose(
        CODE.MCP_UNAVAILABLE,
        `MCP server ${server.name} (${server.url}): its tool ${JSON.stringify(tool)} was left out: ${why}`,
      );
    }
  }
  harness._approvals = new PageApprovals(onApproval, (message) => harness._host._post(message));
  if (plain.shell) {
    harness._sandbox = new SandboxHost(
      base,
      (report) => harness._sandboxReport(report),
      (started) => harness._sandboxPort(started),
    );
  }
  harness.containment.agentNetwork = plain.shell && network ? [...network.allow] : [];
  harness._base = base;
  harness._previewAllow = [...(plain.network?.allow ?? [])]; // the preview's CSP (preview.mjs)
  // Aborting during the boot closes the harness: the promise rejects with ECANCELED.
  const abort = () => harness.close();
  signal?.addEventListener("abort", abort, { once: true });
  try {
    await harness._boot(base.href, plain, onProgress, { kind: storage, name: workspace, named, takeOver: takeOver === true });
  } finally {
    signal?.removeEventListener("abort", abort);
  }
  return harness;
}

const MAX_DIAGNOSTICS = 100;

class Harness {
  /** @param {ReturnType<typeof startWorker>} started @param {Function} [onDiagnostic] */
  constructor({ worker, failure, stop }, onDiagnostic) {
    this._worker = worker;
    this._stopStart = stop; // the worker's start is no longer watched
    this._sandbox = null; // SandboxHost, when the shell is on
    this._base = new URL("./", import.meta.url); // the bundle's folder (createHarness sets it)
    this._previewAllow = []; // origins the preview may reach (network.allow)
    this._host = null; // PageHost: the page's side of tool calls and fetches (createHarness sets it)
    /** @type {PageApprovals | null} the page's onApproval (createHarness sets it) */
    this._approvals = null;
    this._onDiagnostic = typeof onDiagnostic === "function" ? onDiagnostic : null;
    this._reported = new Set(); // diagnostic codes already written to the console
    /** Messages from the worker or the sandbox that were dropped, newest last (at most 100). */
    this.diagnostics = [];
    /** The MCP servers of the `mcp` option: {name, url, status: "connected" | "failed", tools, error?}. */
    this.mcp = [];
    /** Where the workspace lives: {kind: "opfs" | "memory", workspace, restoredFiles, reason?}. */
    this.storage = null;
    /** The workspaces this origin keeps (OPFS): list them, delete one that is not open. */
    this.workspaces = { list: listWorkspaces, delete: deleteWorkspace };
    /** @type {import("./pyharness.d.ts").Containment} What is in force on this page, measured by the sandbox at its boot. */
    this.containment = {
      sandbox: "off",
      secretsOnPage: true,
      workerCsp: false,
      crossOriginIsolated: globalThis.crossOriginIsolated === true,
    };
    this._nextId = 1;
    /** @type {Map<number, Pending>} */
    this._pending = new Map();
    /** @type {Map<string, Run>} */
    this._runs = new Map();
    /** @type {Map<string, {root: Run, seq: number}>} a subagent in progress → the run at its top, and its events so far */
    this._nested = new Map();
    /** The boot's promise, from init to ready or the failure. @type {Booting | null} */
    this._booting = null;
    this._listeners = new Set();
    this._closed = null; // the HarnessError every call gets once closed
    /** Resolves with that HarnessError when the harness closes, for any reason (close(),
     * a failure, another tab taking the workspace over: code EBUSY). */
    this.closed = new Promise((resolve) => (this._resolveClosed = resolve));
    this.versions = null;
    this.tools = [];
    this.fs = new FileSystem(this);
    this.threads = new Threads(this);
    worker.onmessage = (event) => this._receive(event.data);
    worker.onerror = (event) => {
      event.preventDefault?.();
      // While booting: EBOOT with the cause, found out (a fetch of worker.mjs) before it fails.
      if (this._booting) void failure(event).then((error) => this._fail(error));
      else this._fail(new HarnessError("EIO", `the pyharness worker failed: ${event.message || "unknown error"}; create a new harness`));
    };
  }

  /** @returns {Promise<void>} */
  _boot(baseUrl, config, onProgress, storage) {
    return new Promise((resolve, reject) => {
      this._booting = { resolve, reject, onProgress };
      this._worker.postMessage({ type: "init", baseUrl, config, storage });
    });
  }

  /** A message that was not expected: dropped, kept in h.diagnostics, told once. */
  _diagnose(code, message) {
    const entry = { code, message: String(message).slice(0, 500), at: Date.now() };
    this.diagnostics.push(entry);
    if (this.diagnostics.length > MAX_DIAGNOSTICS) this.diagnostics.shift();
    if (!this._reported.has(code)) {
      this._reported.add(code);
      console.warn(`pyharness: ${code === CODE.MCP_UNAVAILABLE ? "left out" : "dropped a message"} (${code}): ${entry.message}`);
    }
    try {
      this._onDiagnostic?.(entry);
    } catch (err) {
      console.error("pyharness: onDiagnostic threw", err);
    }
  }

  // -- the sandbox (shell on) ------------------------------------------------

  async _startSandbox(reason = PAGE_SANDBOX.BOOT, generation = undefined) {
    if (!this._sandbox || this._closed) return;
    // "starting" until the new sandbox reports (at once when a booted spare takes over).
    this.containment = { ...this.containment, sandbox: "starting" };
    try {
      await this._sandbox.replace(reason, generation);
    } catch (err) {
      this.containment = { ...this.containment, sandbox: "failed", error: String(err.message ?? err) };
    }
  }

  _sandboxPort({ port, generation, reason }) {
    if (this._closed) return;
    this._worker.postMessage({ type: "sandbox_port", port, generation, reason }, [port]);
  }

  /** @param {{type: string, generation: number, ms?: number, probes?: Record<string, unknown>, message?: string}} report */
  _sandboxReport({ type, generation, ms, probes, message }) {
    if (type === "boot_error") {
      this.containment = { ...this.containment, sandbox: "failed", error: message ?? "unknown error" };
      return;
    }
    const p = probes ?? {};
    this.containment = {
      ...this.containment,
      sandbox: "ready",
      generation,
      bootMs: ms,
      opaqueOrigin: p.origin === "null",
      networkBlocked: p.network === true,
      storageBlocked: p.indexedDB === true && p.cacheStorage === true && p.opfs === true,
      evalBlocked: p.eval === true,
      secretsOnPage: true,
    };
  }

  /**
   * Start a run. The returned Run is async-iterable over its events; `run.done`
   * resolves with {text, stopReason, usage, budget?, error?}.
   * `mode: "plan"`: a plan run (read-only tools; its answer comes as a `plan` event);
   * `plan`: an approved plan this run carries out (docs/embedding.md, "Plan mode").
   * @param {string} text @param {{signal?: AbortSignal, mode?: "plan", plan?: string, attachments?: {name: string, type?: string, data: Blob | ArrayBuffer | ArrayBufferView | string}[]}} [opts]
   */
  prompt(text, opts = {}) {
    const run = new Run(`run-${Date.now().toString(36)}-${this._nextId++}`, this);
    if (this._closed) {
      run._fail(this._closed);
      return run;
    }
    if (typeof text !== "string") {
      run._fail(new HarnessError("EINVAL", "prompt text must be a string"));
      return run;
    }
    const { attachments, mode, plan } = opts ?? {};
    const planned = { ...(mode === undefined ? {} : { mode }), ...(plan === undefined ? {} : { plan }) };
    const refused =
      mode !== undefined && mode !== "plan"
        ? new HarnessError("EINVAL", `EINVAL: mode must be "plan" or left out, not ${JSON.stringify(String(mode)).slice(0, 40)}`)
        : plan !== undefined && typeof plan !== "string"
          ? new HarnessError("EINVAL", "EINVAL: plan must be a string: the plan to carry out")
          : attachments === undefined
            ? null
            : checkAttachments(attachments);
    if (refused !== null) {
      run._fail(refused); // nothing was sent or written
      return run;
    }
    this._runs.set(run.id, run);
    if (!attachments?.length) this._worker.postMessage({ type: "prompt", runId: run.id, text, ...planned });
    else {
      // Written to /work/attachments/ first (through h.fs), then named in the prompt.
      writeAttachments(attachments, this.fs).then(
        (files) => {
          if (this._runs.has(run.id) && !run._cancelled)
            this._worker.postMessage({ type: "prompt", runId: run.id, text, attachments: files, ...planned });
          else if (this._runs.delete(run.id))
            run._fail(new HarnessError("ECANCELED", "ECANCELED: the run was cancelled before it started"));
        },
        (err) => {
          this._runs.delete(run.id);
          run._fail(
            err instanceof HarnessError
              ? err
              : new HarnessError("EIO", `EIO: the attachments could not be written: ${err?.message ?? err}`),
          );
        },
      );
    }
    const { signal } = opts;
    if (signal) {
      if (signal.aborted) run.cancel();
      else signal.addEventListener("abort", () => run.cancel(), { once: true });
    }
    return run;
  }

  /**
   * Take back everything run `runId` changed in /work (checkpoints: docs/embedding.md,
   * "Checkpoints and undo"). All or nothing: `ECONFLICT` (naming the paths) when a later
   * change touched them, unless `cascade` reverts the later runs first. `dryRun`: what
   * it would change, changing nothing. `force`: revert even over a change the page made
   * since (what it overwrites comes back by reverting the revert). Resolves with
   * {revertId, reverted, changes}; the revert is itself revertable by `revertId` (a redo).
   * @param {string} runId @param {{dryRun?: boolean, cascade?: boolean, force?: boolean}} [opts]
   */
  revert(runId, opts = {}) {
    return this._checkpoint({
      op: "revert",
      runId,
      dryRun: Boolean(opts.dryRun),
      cascade: Boolean(opts.cascade),
      force: Boolean(opts.force),
    });
  }

  /** What run `runId` changed, per path: {path, kind, entry, sizeBefore, sizeAfter,
   * changedSince, diff}. @param {string} runId */
  diff(runId) {
    return this._checkpoint({ op: "diff", runId });
  }

  /** The runs that can be reverted, oldest first: {runId, revertedBy, reverts, paths, bytes, parentRunId}. */
  checkpoints() {
    return this._checkpoint({ op: "list" });
  }

  async _checkpoint(request) {
    return (await this._request({ type: "checkpoint", request: JSON.stringify(request) })).value;
  }

  /**
   * A folder of /work shown as a website (`root`, default "/"; `entry`, default
   * "index.html"): mount `preview.element` where it should show. It reloads when a file
   * under the root changes, keeps each load's console (`entries`), and `close()` removes
   * it. Contained like the sandbox (docs/security.md, "The preview").
   * @param {{root?: string, entry?: string}} [options]
   */
  preview(options = {}) {
    if (this._closed) throw this._closed;
    return new Preview(this, this._base, this._previewAllow, options);
  }

  /** Where /work's repository stands: `{branch, head, changes}` (`changes`: the files
   * `git status --short` would list), or null when /work is not a repository. Read on the
   * page over h.fs, writing nothing (embed/git/git-summary.mjs, loaded on first use).
   * @returns {Promise<{branch: string | null, head: string | null, changes: number} | null>} */
  async git() {
    if (this._closed) throw this._closed;
    const { gitSummary } = await import(new URL("git-summary.mjs", this._base).href);
    return gitSummary(this.fs);
  }

  /** What this harness (since createHarness) and the current thread (ever) used, and the
   * budget in force: {harness, thread, threadId, budget} (docs/embedding.md, "Usage and
   * budgets"). */
  async usage() {
    return (await this._request({ type: "usage", request: JSON.stringify({ op: "usage" }) })).value;
  }

  /** Replace the budget in force (null: none), at once, also for a run in progress; e.g.
   * raise the thread's limit and prompt again. Resolves like `usage()`; a bad budget is
   * `EINVAL` naming the field. @param {import("../shared/options.d.ts").Budget | null} budget */
  async setBudget(budget) {
    const request = JSON.stringify({ op: "setBudget", budget: budget ?? null });
    return (await this._request({ type: "usage", request })).value;
  }

  /** Cancel every running run; each ends with stop reason "aborted". */
  cancel() {
    if (!this._closed) this._worker.postMessage({ type: "cancel" });
  }

  /** Listen to the events of every run, and to every file_change (also outside a run,
   * for h.fs calls). Returns a function that unsubscribes. */
  subscribe(listener) {
    this._listeners.add(listener);
    return () => this._listeners.delete(listener);
  }

  /** Terminate the worker and the sandbox; every pending and later call rejects. Works
   * in any state, also after a failure. */
  close() {
    this._terminate();
    this._fail(new HarnessError("ECANCELED", "the harness was closed (h.close()); create a new one with createHarness()"));
  }

  _terminate() {
    this._stopStart();
    this._worker.terminate();
    this._sandbox?.close();
    if (this.containment.sandbox !== "off") this.containment = { ...this.containment, sandbox: "closed" };
  }

  _fail(error) {
    if (this._closed) return;
    this._closed = error;
    this._resolveClosed(error);
    if (this._booting) {
      this._booting.reject(error);
      this._booting = null;
      this._terminate();
    }
    for (const { reject } of this._pending.values()) reject(error);
    this._pending.clear();
    for (const run of this._runs.values()) run._fail(error);
    this._runs.clear();
    this._nested.clear();
    this._host?.abortAll();
    this._approvals?.abortAll();
  }

  _request(message, transfer = []) {
    if (this._closed) return Promise.reject(this._closed);
    const id = this._nextId++;
    return new Promise((resolve, reject) => {
      this._pending.set(id, { resolve, reject, op: message.type });
      try {
        this._worker.postMessage({ ...message, id }, transfer);
      } catch (err) {
        // e.g. DataCloneError: nothing was sent, nothing to wait for
        this._pending.delete(id);
        reject(new HarnessError("EINVAL", `EINVAL: could not send the request to the worker: ${err.message}`));
      }
    });
  }

  _receive(message) {
    if (this._closed) return;
    FROM_WORKER.receive(this, message, (problem, m) => this._dropped(problem, m));
  }

  /** A message the table does not allow now: recorded, and a refused request answered.
   * @param {{code: string | null, condition?: string, reason: string}} problem @param {any} message */
  _dropped({ code, condition, reason }, message) {
    this._diagnose(code, reason);
    if (message?.type === "toolcall" && code === CODE.UNEXPECTED_TOOLCALL && condition !== "newToolId") {
      this._host?.refuseTool(message, reason);
    } else if (
      message?.type === "approval"
      && code === CODE.UNEXPECTED_APPROVAL
      && condition !== "newApprovalId"
      && Number.isInteger(message.id)
    ) {
      this._approvals?.refuse(message, reason);
    } else if (message?.type === "fetch" && code === CODE.REFUSED_FETCH) {
      this._host?.refuseFetch(message);
    } else if (message?.type === "netfetch" && condition === "fields") {
      this._host?.answerNet(message.id, { error: "network: a malformed request" });
    }
  }

  _booted(message) {
    // The receiver takes `ready` only while booting (its `booting` condition).
    const booting = /** @type {Booting} */ (this._booting);
    this.versions = message.versions;
    this.tools = message.tools;
    this.containment = { ...this.containment, workerCsp: message.workerCsp };
    this.storage = { ...message.storage };
    booting.resolve();
    this._booting = null;
    void this._startSandbox(); // pre-warm: the first command should not wait for it
  }

  /** The persistent store could not write (storage full, refused), or works again. */
  _storageReport({ error }) {
    if (error === null) delete this.storage.error;
    else this.storage.error = { code: error.code, message: error.message.slice(0, 1000) };
  }

  /** Another tab took the workspace over (takeOver). */
  _takenOver({ saved }) {
    this.storage = { ...this.storage, takenOver: true };
    this._terminate();
    this._fail(
      new HarnessError(
        "EBUSY",
        `EBUSY: the workspace '${this.storage.workspace}' was taken over by another tab${saved === false ? " (what could not be saved here is lost)" : ""}; createHarness({takeOver: true}) takes it back`,
      ),
    );
  }

  _settle(message) {
    // A reply the receiver took (its `awaited` condition; protocol_error checks has()).
    const pending = /** @type {Pending} */ (this._pending.get(message.id));
    this._pending.delete(message.id);
    if (message.ok === false) pending.reject(new HarnessError(String(message.code), String(message.message)));
    else pending.resolve(message);
  }

  _event(event) {
    // An event the receiver took: of a running run, or of a subagent under one (its
    // `nextEvent` condition). A subagent's events go to the run at the top, in order.
    const run = this._runs.get(event.runId);
    if (run !== undefined) {
      run._push(event);
      if (event.type === "run_end") this._runs.delete(event.runId);
    } else {
      let nested = this._nested.get(event.runId);
      if (nested === undefined) {
        const root = this._runs.get(event.parentRunId) ?? this._nested.get(event.parentRunId)?.root;
        nested = { root: /** @type {Run} */ (root), seq: 0 };
        this._nested.set(event.runId, nested);
      }
      nested.seq++;
      nested.root._push(event);
      if (event.type === "run_end") this._nested.delete(event.runId);
    }
    this._tell(event);
  }

  /** A path in /work changed (a tool call's or a page call's doing): to the subscribers. */
  _fileChange(event) {
    this._tell(event);
  }

  _tell(event) {
    for (const listener of this._listeners) {
      try {
        listener(event);
      } catch (err) {
        console.error("pyharness: an event listener threw", err);
      }
    }
  }
}

/** The reply type of each request the page makes (the rest are `echo`). */
const REPLY_TYPE = { fs: "fsres", threads: "threadsres", checkpoint: "checkpointres", usage: "usageres", preview: "previewres" };

/** What the worker may send (embed/shared/protocol.mjs, workerToPage), and what each does. */
const FROM_WORKER = receiver(
  "workerToPage",
  {
    progress: (h, { step, state, ms, bytes }) => {
      try {
        h._booting.onProgress?.({ step, state, ms, bytes });
      } catch (err) {
        console.error("pyharness: onProgress threw", err);
      }
    },
    ready: (h, message) => h._booted(message),
    boot_error: (h, { step, message }) =>
      h._fail(new HarnessError("EBOOT", `pyharness failed to start at step '${step}': ${message}`, step)),
    fsres: (h, message) => h._settle(message),
    threadsres: (h, message) => h._settle(message),
    checkpointres: (h, message) => h._settle(message),
    usageres: (h, message) => h._settle(message),
    previewres: (h, message) => h._settle(message),
    echo: (h, message) => h._settle(message),
    event: (h, { event }) => h._event(event),
    file_changes: (h, { events }) => {
      for (const event of events) h._fileChange(event);
    },
    storage: (h, message) => h._storageReport(message),
    workspace_taken: (h, message) => h._takenOver(message),
    toolcall: (h, message) => void h._host.runTool(message),
    toolcancel: (h, { id }) => h._host.cancelTool(id),
    approval: (h, message) => void h._approvals.ask(message),
    approvalcancel: (h, { id }) => h._approvals.cancel(id),
    fetch: (h, message) => void h._host.proxyFetch(message),
    fetch_abort: (h, { id }) => h._host.abortFetch(id),
    netfetch: (h, message) => void h._host.netFetch(message),
    sandbox_restart: (h, { reason, generation }) => void h._startSandbox(reason, generation),
    sandbox_deadline: (h, { generation, command, ms }) => h._sandbox.arm({ generation, command, ms }),
    sandbox_done: (h, { command }) => {
      h._sandbox.disarm(command);
      h._host?.commandEnded(command);
    },
    // the worker tore the sandbox down for what it sent, or kept a newer write
    sandbox_dropped: (h, { code, message }) => h._diagnose(code, message),
    protocol_error: (h, { id, message }) => {
      if (h._pending.has(id)) return h._settle({ id, ok: false, code: "EINVAL", message });
      console.warn(`pyharness: ${message}`);
    },
  },
  {
    booting: (h) => h._booting !== null && h._booting !== undefined,
    ready: (h) => h._booting === null || h._booting === undefined,
    awaited: (h, { id, type }) => {
      const op = h._pending.get(id)?.op;
      return op !== undefined && (REPLY_TYPE[op] ?? "echo") === type;
    },
    opfs: (h) => h._booting == null && h.storage?.kind === "opfs",
    shell: (h) => h._sandbox !== null,
    inRun: (h) => h._runs.size > 0,
    knownTool: (h, { name }) => h._host._tools.has(name),
    newToolId: (h, { id }) => !h._host._aborts.has(`tool:${id}`),
    newApprovalId: (h, { id }) => !h._approvals.isPending(id),
    modelEndpoint: (h, message) => h._host.isModelRequest(message),
    nextEvent: (h, { event }) => {
      const run = h._runs.get(event.runId) ?? h._nested.get(event.runId);
      if (run !== undefined) return event.seq === (run instanceof Run ? run._seq : run.seq);
      // A subagent's first event: under a run (or a subagent) in progress.
      const parent = h._runs.get(event.parentRunId) ?? h._nested.get(event.parentRunId);
      return parent !== undefined && event.seq === 0 && event.type === "run_start" && typeof event.parentCallId === "string";
    },
  },
);

/** h.threads: several conversations over one workspace, kept with it. */
class Threads {
  constructor(harness) {
    this._h = harness;
  }

  /** @returns {Promise<{current: string, threads: import("./pyharness.d.ts").ThreadInfo[]}>} */
  list() {
    return this._op({ op: "list" });
  }

  /** A new, empty thread, which becomes the current one. */
  create(title = "") {
    return this._op({ op: "create", title });
  }

  /** The next h.prompt continues this thread. */
  switch(id) {
    return this._op({ op: "switch", id });
  }

  rename(id, title) {
    return this._op({ op: "rename", id, title });
  }

  delete(id) {
    return this._op({ op: "delete", id });
  }

  /** Take back run `runId` and every later run of the current thread: their file changes
   * are reverted (all or nothing: ECONFLICT) and the thread is cut back to just before
   * that run's prompt. Resolves with {rewound, reverted, revertId, changes, removedMessages}. */
  rewind(runId) {
    return this._op({ op: "rewind", runId });
  }

  /** The thread's events, to redraw it (text deltas merged; the current thread by default). */
  transcript(id) {
    return this._op(id === undefined ? { op: "transcript" } : { op: "transcript", id });
  }

  async _op(request) {
    return (await this._h._request({ type: "threads", request: JSON.stringify(request) })).value;
  }
}
