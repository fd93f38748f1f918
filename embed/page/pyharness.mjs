// pyharness page API: createHarness() starts the module worker and gives h.fs, runs
// and events. Public types: pyharness.d.ts. Worker messages: docs/protocol.md.
//
// The page is the authority and trusts no message it did not expect: the model's
// credentials never leave this module (the worker asks us to make its model requests),
// every message from the worker is checked against what is pending, and the shell runs
// in a sandbox that only the page can start and kill (sandbox-host.mjs).
import { keyHeaders, MODEL_APIS, modelEndpoint } from "./model-apis.mjs";
import { checkAttachments, writeAttachments } from "./attachments.mjs";
import { checkMcpOption, connectMcp, ToolOutput } from "./mcp.mjs";
import { agentNetwork, checkNetworkOption, checkPackagesOption, createNetwork, MAX_IN_FLIGHT } from "./network.mjs";
import { deleteWorkspace, listWorkspaces } from "./workspaces.mjs";
import { CODE, receiver } from "../shared/protocol.mjs";
import { SandboxHost } from "./sandbox-host.mjs";
import { HarnessError } from "./errors.mjs";
import { PageApprovals } from "./approvals.mjs";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export { deleteWorkspace, HarnessError, listWorkspaces };

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
  const workerUrl = new URL("worker.mjs", base);
  const worker = new Worker(workerUrl, { type: "module", name: "pyharness" });
  const harness = new Harness(worker, workerUrl.href, onDiagnostic);
  const network = createNetwork(agentNetwork(plain.network, plain.packages), originHeaders);
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

/**
 * The options without the model's secrets (apiKey, secretHeaders), which stay on the
 * page, and what the page needs to add them to the model's requests, and only to those.
 * Where those go and how the key is sent: model-apis.mjs, generated from the Python
 * that builds the requests (harness/models/configs.py).
 */
function splitSecrets(options) {
  const model = options.model;
  if (!model || typeof model !== "object" || !Object.hasOwn(MODEL_APIS, model.api)) return { config: { ...options }, credentials: null };
  const { apiKey, secretHeaders, ...visible } = model;
  if (apiKey !== undefined && typeof apiKey !== "string") throw new HarnessError("EINVAL", "EINVAL: model.apiKey must be a string");
  if (secretHeaders !== undefined && !isStringRecord(secretHeaders)) {
    throw new HarnessError("EINVAL", "EINVAL: model.secretHeaders must be an object of string header values");
  }
  visible.baseUrl = visible.baseUrl ?? MODEL_APIS[model.api].baseUrl;
  if (typeof visible.baseUrl !== "string") throw new HarnessError("EINVAL", "EINVAL: model.baseUrl must be a string");
  const headers = keyHeaders(model.api, apiKey);
  for (const [name, value] of Object.entries(secretHeaders ?? {})) headers[name.toLowerCase()] = value;
  return { config: { ...options, model: visible }, credentials: { endpoint: modelEndpoint(model.api, visible.baseUrl), headers } };
}

const isStringRecord = (value) => value !== null && typeof value === "object" && Object.values(value).every((v) => typeof v === "string");

/** The JSON-safe part of the page tools; `run` stays here. */
function pageToolSpecs(tools) {
  if (!Array.isArray(tools)) throw new HarnessError("EINVAL", "EINVAL: tools must be an array");
  return tools.map((tool, i) => {
    if (!tool || typeof tool.name !== "string" || typeof tool.run !== "function") {
      throw new HarnessError("EINVAL", `EINVAL: tools[${i}] needs a string name and a run(input, {signal, fs}) function`);
    }
    const { name, description = "", parameters = { type: "object", properties: {} }, timeoutMs } = tool;
    return { name, description, parameters, ...(timeoutMs !== undefined ? { timeoutMs } : {}) };
  });
}

const MAX_DIAGNOSTICS = 100;

class Harness {
  /** @param {Worker} worker @param {string} workerUrl @param {Function} [onDiagnostic] */
  constructor(worker, workerUrl, onDiagnostic) {
    this._worker = worker;
    this._sandbox = null; // SandboxHost, when the shell is on
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
    this.containment = { sandbox: "off", secretsOnPage: true, workerCsp: false };
    this._nextId = 1;
    /** @type {Map<number, {resolve: Function, reject: Function, op: string}>} */
    this._pending = new Map();
    /** @type {Map<string, Run>} */
    this._runs = new Map();
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
      this._fail(
        this._booting
          ? new HarnessError(
              "EBOOT",
              `pyharness failed to start at step 'worker': could not load ${workerUrl}${event.message ? ` (${event.message})` : ""}; check the baseUrl option and that the bundle is served`,
              "worker",
            )
          : new HarnessError("EIO", `the pyharness worker failed: ${event.message || "unknown error"}; create a new harness`),
      );
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

  async _startSandbox(reason = "boot", generation = undefined) {
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
   * resolves with {text, stopReason, usage?, error?}.
   * @param {string} text @param {{signal?: AbortSignal, attachments?: {name: string, type?: string, data: Blob | ArrayBuffer | ArrayBufferView | string}[]}} [opts]
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
    const { attachments } = opts ?? {};
    const refused = attachments === undefined ? null : checkAttachments(attachments);
    if (refused !== null) {
      run._fail(refused); // nothing was sent or written
      return run;
    }
    this._runs.set(run.id, run);
    if (!attachments?.length) this._worker.postMessage({ type: "prompt", runId: run.id, text });
    else {
      // Written to /work/attachments/ first (through h.fs), then named in the prompt.
      writeAttachments(attachments, this.fs).then(
        (files) => {
          if (this._runs.has(run.id) && !run._cancelled)
            this._worker.postMessage({ type: "prompt", runId: run.id, text, attachments: files });
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

  /** The runs that can be reverted, oldest first: {runId, revertedBy, reverts, paths, bytes}. */
  checkpoints() {
    return this._checkpoint({ op: "list" });
  }

  async _checkpoint(request) {
    return (await this._request({ type: "checkpoint", request: JSON.stringify(request) })).value;
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
    this.versions = message.versions;
    this.tools = message.tools;
    this.containment = { ...this.containment, workerCsp: message.workerCsp };
    this.storage = { ...message.storage };
    this._booting.resolve();
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
    const pending = this._pending.get(message.id);
    this._pending.delete(message.id);
    if (message.ok === false) pending.reject(new HarnessError(String(message.code), String(message.message)));
    else pending.resolve(message);
  }

  _event(event) {
    const run = this._runs.get(event.runId);
    run._push(event);
    if (event.type === "run_end") this._runs.delete(event.runId);
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
const REPLY_TYPE = { fs: "fsres", threads: "threadsres", checkpoint: "checkpointres" };

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
      const run = h._runs.get(event.runId);
      return run !== undefined && event.seq === run._events.length;
    },
  },
);

/** What the page does for the worker: run its tools, make requests with its fetch. */
class PageHost {
  /** @param {{endpoint: string, headers: Record<string, string>} | null} credentials */
  constructor(harness, tools, pageFetch, credentials, network) {
    this._h = harness;
    this._tools = new Map(tools.map((t) => [t.name, t]));
    this._fetch = pageFetch;
    this._credentials = credentials;
    this._network = network; // createNetwork(): the model's code's way out, or null
    this._aborts = new Map(); // "tool:id" / "fetch:id" / "net:command" → AbortController
    this._netCommands = new Map(); // command nonce → {controller, active, waiting: [wake]}
    this._endedCommands = new Set(); // nonces of ended commands (the last 1,000)
    /** @type {Map<string, any> | null} page tool name → its input's JSON Schema validator, made at first use */
    this._validators = null;
  }

  cancelTool(id) {
    this._aborts.get(`tool:${id}`)?.abort(new HarnessError("ECANCELED", "the tool call was cancelled"));
  }

  abortFetch(id) {
    this._aborts.get(`fetch:${id}`)?.abort();
  }

  refuseFetch({ id }) {
    this._post({ type: "fetch_error", id, message: "the page refused this request: only the model's endpoint may be fetched" });
  }

  _post(message, transfer) {
    if (!this._h._closed) this._h._worker.postMessage(message, transfer);
  }

  refuseTool(message, why) {
    this._post({ type: "toolres", id: message.id, ok: false, output: `the page refused the call: ${why}` });
  }

  /** Only POSTs to the configured model endpoint are made, with the key added here. */
  isModelRequest({ url, method, headers, body }) {
    return (
      this._credentials !== null
      && url === this._credentials.endpoint
      && method === "POST"
      && isStringRecord(headers ?? {})
      && (body === undefined || body === null || typeof body === "string")
    );
  }

  /** The harness closed: abort every page tool and request still running (the model's
   * code's too: none of them reaches a server after close()). */
  abortAll() {
    for (const controller of this._aborts.values()) controller.abort(new HarnessError("ECANCELED", "the harness was closed"));
    this._aborts.clear();
    for (const command of [...this._netCommands.keys()]) this.commandEnded(command);
  }

  async runTool({ id, name, input }) {
    const tool = this._tools.get(name);
    const controller = new AbortController();
    this._aborts.set(`tool:${id}`, controller);
    let reply;
    try {
      const value = JSON.parse(input);
      const problems = await this._check(tool, value);
      if (problems !== null) {
        this._h._diagnose(CODE.INVALID_TOOL_INPUT, `input for '${name}' breaks its schema: ${problems}`);
        throw new Error(`the input does not match the tool's schema: ${problems}`);
      }
      // Its fs is the harness's, with each change recorded as this call's (its
      // file_change events carry the run, the call and the tool).
      const output = await tool.run(value, { signal: controller.signal, fs: new FileSystem(this._h, id) });
      if (output instanceof ToolOutput) reply = { ok: true, output: output.text, images: output.images };
      else reply = { ok: true, output: typeof output === "string" ? output : JSON.stringify(output ?? null) };
    } catch (err) {
      reply = { ok: false, output: err instanceof Error ? err.message : String(err) };
    } finally {
      this._aborts.delete(`tool:${id}`);
    }
    this._post({ type: "toolres", id, ...reply });
  }

  /** The worker checked the input already; the page checks again (it trusts no message):
   * the problems found, or null. */
  async _check(tool, value) {
    this._validators ??= new Map();
    if (!this._validators.has(tool.name)) {
      const { Validator } = await import("./json-schema.mjs");
      const schema = tool.parameters ?? { type: "object", properties: {} };
      this._validators.set(tool.name, new Validator(schema, "2020-12", false));
    }
    const result = this._validators.get(tool.name).validate(value);
    if (result.valid) return null;
    return result.errors
      .slice(0, 3)
      .map((e) => `${e.instanceLocation} ${e.error}`)
      .join("; ");
  }

  /**
   * One request of the model's code, for the command `command` (the sandbox's nonce):
   * at most MAX_IN_FLIGHT of a command run at once (the rest wait their turn), all of
   * them are aborted when the command ends (commandEnded) or the harness closes, and
   * every one is answered, with the response or an error; nothing here rejects.
   */
  async netFetch({ id, command, url, method, headers, body }) {
    const answer = (reply) => this.answerNet(id, reply);
    if (this._network === null)
      return answer({ error: "network: this page allows the model's code no network (the network and packages options)" });
    const slot = await this._netSlot(command);
    if (slot === null) return answer({ error: "network: the command ended before this request could start" });
    try {
      const request = { url, method, headers: isStringRecord(headers) ? headers : {}, body };
      answer(await this._network.fetch(request, slot.signal));
    } catch (err) {
      // createNetwork never rejects; this is a last guard for the page
      answer({ error: `network: ${err instanceof Error ? err.message : String(err)}` });
    } finally {
      slot.release();
    }
  }

  answerNet(id, reply) {
    this._post({ type: "netres", id, ...reply }, reply.body instanceof ArrayBuffer ? [reply.body] : []);
  }

  /** A turn for one request of `command`, or null once the command has ended. */
  _netSlot(command) {
    let entry = this._netCommands.get(command);
    if (entry === undefined) {
      if (this._endedCommands.has(command)) return Promise.resolve(null);
      entry = { controller: new AbortController(), active: 0, waiting: [] };
      this._netCommands.set(command, entry);
      this._aborts.set(`net:${command}`, entry.controller);
    }
    const take = () => {
      if (entry.controller.signal.aborted) return null;
      entry.active++;
      return {
        signal: entry.controller.signal,
        release: () => {
          entry.active--;
          entry.waiting.shift()?.();
        },
      };
    };
    if (entry.active < MAX_IN_FLIGHT) return Promise.resolve(take());
    return new Promise((resolve) => entry.waiting.push(() => resolve(take())));
  }

  /** A command ended: its requests are aborted, and later ones for it refused. */
  commandEnded(command) {
    this._endedCommands.add(command);
    if (this._endedCommands.size > 1000) this._endedCommands.delete(this._endedCommands.values().next().value);
    const entry = this._netCommands.get(command);
    if (entry === undefined) return;
    this._netCommands.delete(command);
    this._aborts.delete(`net:${command}`);
    entry.controller.abort(new HarnessError("ECANCELED", "the command ended"));
    for (const wake of entry.waiting.splice(0)) wake();
  }

  async proxyFetch({ id, url, method, headers, body }) {
    const controller = new AbortController();
    this._aborts.set(`fetch:${id}`, controller);
    try {
      const withKey = { ...(headers ?? {}), ...this._credentials.headers };
      const response = await this._fetch(url, { method, headers: withKey, body: body ?? undefined, signal: controller.signal });
      this._post({ type: "fetch_head", id, status: response.status, headers: Object.fromEntries(response.headers) });
      if (response.body) {
        const reader = response.body.getReader();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          const chunk = value.slice().buffer; // our own copy, transferred
          this._post({ type: "fetch_chunk", id, data: chunk }, [chunk]);
        }
      }
      this._post({ type: "fetch_end", id });
    } catch (err) {
      this._post({ type: "fetch_error", id, message: err instanceof Error ? err.message : String(err) });
    } finally {
      this._aborts.delete(`fetch:${id}`);
    }
  }
}

class Run {
  constructor(id, harness) {
    this.id = id;
    this._harness = harness;
    this._events = [];
    this._waiters = [];
    this._ended = false;
    this.done = new Promise((resolve, reject) => {
      this._resolve = resolve;
      this._reject = reject;
    });
    this.done.catch(() => {}); // a run nobody awaits must not raise unhandled rejections
  }

  /** Take back what this run changed: `h.revert(run.id, opts)`. @param {{dryRun?: boolean, cascade?: boolean}} [opts] */
  revert(opts = {}) {
    return this._harness.revert(this.id, opts);
  }

  /** What this run changed: `h.diff(run.id)`. */
  diff() {
    return this._harness.diff(this.id);
  }

  /** Cancel this run; it ends with stop reason "aborted". */
  cancel() {
    this._cancelled = true; // a run still writing its attachments never starts
    if (!this._ended && !this._harness._closed) this._harness._worker.postMessage({ type: "cancel", runId: this.id });
  }

  _push(event) {
    this._events.push(event);
    if (event.type === "run_end") {
      this._ended = true;
      const error = this._events.find((e) => e.type === "error");
      this._resolve({
        text: event.text,
        stopReason: event.stopReason,
        ...(event.usage ? { usage: event.usage } : {}),
        ...(error ? { error: { code: error.code, message: error.message } } : {}),
      });
    }
    this._wake();
  }

  _fail(error) {
    if (this._ended) return;
    this._ended = true;
    this._error = error;
    this._reject(error);
    this._wake();
  }

  _wake() {
    for (const wake of this._waiters.splice(0)) wake();
  }

  async *[Symbol.asyncIterator]() {
    for (let i = 0; ; i++) {
      while (i >= this._events.length && !this._ended) await new Promise((r) => this._waiters.push(r));
      if (i < this._events.length) yield this._events[i];
      else if (this._error) throw this._error;
      else return;
    }
  }
}

/** h.threads: several conversations over one workspace, kept with it. */
class Threads {
  constructor(harness) {
    this._h = harness;
  }

  /** @returns {Promise<{current: string, threads: {id, title, created, updated, messages}[]}>} */
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

class FileSystem {
  /** @param {Harness} harness @param {number} [call] the page tool call it belongs to */
  constructor(harness, call) {
    this._h = harness;
    this._call = call;
  }

  /**
   * @overload
   * @param {string} path
   * @returns {Promise<Uint8Array>}
   */
  /**
   * @overload
   * @param {string} path
   * @param {{encoding: "utf8" | "utf-8"} | "utf8" | "utf-8"} opts
   * @returns {Promise<string>}
   */
  /**
   * @param {string} path
   * @param {{encoding?: string} | string} [opts]
   * @returns {Promise<Uint8Array | string>}
   */
  async readFile(path, opts = {}) {
    const encoding = (typeof opts === "string" ? opts : opts?.encoding) ?? null;
    if (encoding !== null && encoding !== "utf8" && encoding !== "utf-8") {
      throw new HarnessError("EINVAL", `EINVAL: unsupported encoding '${encoding}'; use "utf8" or none for bytes`);
    }
    const { data } = await this._op({ op: "readFile", path });
    const bytes = new Uint8Array(data);
    return encoding === null ? bytes : decoder.decode(bytes);
  }

  async writeFile(path, data, opts = {}) {
    const bytes = ownBytes(data, "writeFile data");
    // The bytes are a copy of ours: transfer them instead of copying again.
    await this._op({ op: "writeFile", path, append: Boolean(opts?.append) }, bytes.buffer);
  }

  /** The whole workspace as a zip archive. @returns {Promise<Uint8Array>} */
  async exportZip() {
    return new Uint8Array((await this._op({ op: "exportZip" })).data);
  }

  /** Unpack a zip archive into /work (`replace`: empty /work first). Every entry is
   * checked before anything is written. @returns {Promise<{files: number, dirs: number}>} */
  async importZip(data, opts = {}) {
    const bytes = ownBytes(data, "importZip data");
    return (await this._op({ op: "importZip", replace: Boolean(opts?.replace) }, bytes.buffer)).value;
  }

  /** @returns {Promise<import("./pyharness.d.ts").DirEntry[]>} */
  async readdir(path) {
    return (await this._op({ op: "readdir", path })).value;
  }

  /** @returns {Promise<import("./pyharness.d.ts").Stat>} */
  async stat(path) {
    return (await this._op({ op: "stat", path })).value;
  }

  async mkdir(path, opts = {}) {
    await this._op({ op: "mkdir", path, recursive: Boolean(opts?.recursive) });
  }

  async rm(path, opts = {}) {
    await this._op({ op: "rm", path, recursive: Boolean(opts?.recursive), force: Boolean(opts?.force) });
  }

  async rename(from, to) {
    await this._op({ op: "rename", from, to });
  }

  _op(request, data) {
    /** @type {{type: "fs", request: string, data?: ArrayBuffer, call?: number}} */
    const message = { type: "fs", request: JSON.stringify(request) };
    if (data) message.data = data;
    if (this._call !== undefined) message.call = this._call;
    return this._h._request(message, data ? [data] : []);
  }
}

/** A fresh, transferable copy of `data` (a string is encoded as UTF-8). TypedArray.slice()
 * copies into a new ArrayBuffer, also from a SharedArrayBuffer (which cannot be
 * transferred itself); the caller's buffer is never detached. */
function ownBytes(data, what) {
  if (typeof data === "string") return encoder.encode(data);
  if (data instanceof ArrayBuffer || isShared(data)) return new Uint8Array(data).slice();
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength).slice();
  throw new HarnessError("EINVAL", `EINVAL: ${what} must be a string, an ArrayBuffer or a typed array`);
}

const isShared = (data) => typeof SharedArrayBuffer !== "undefined" && data instanceof SharedArrayBuffer;

/** Options that cross to the worker: plain data only (functions stay on the page). */
function serializableConfig(config) {
  const out = {};
  for (const [key, value] of Object.entries(config)) {
    if (typeof value !== "function" && value !== undefined) out[key] = value;
  }
  try {
    return JSON.parse(JSON.stringify(out));
  } catch (err) {
    // a cycle, a BigInt: say so before any worker starts
    throw new HarnessError("EINVAL", `EINVAL: the options must be plain JSON data (${err.message})`);
  }
}
