// <pyharness-chat>: a drop-in chat for the pyharness agent, built only on the public
// API (createHarness, h.fs, runs and their events, h.tools). No framework; styles live
// in its shadow root and are themed with --pyharness-* custom properties.
// Reference: docs/embedding.md, "The widget". Types: widget.d.ts.

import { AttachmentTray, filesOf, imagesOf } from "./widget-attach.mjs";
import { planControl, planning, planToggle } from "./widget-plan.mjs";
import { undoControl } from "./widget-undo.mjs";
import { createHarness } from "../page/pyharness.mjs";
import { FilesPanel } from "./widget-files.mjs";
import { PreviewPanel } from "./widget-preview.mjs";
import { ChatLog } from "./widget-log.mjs";
import { ThreadList } from "./widget-threads.mjs";
import { h, icon, saveAs } from "./widget-dom.mjs";
import { STYLE } from "./widget-style.mjs";

/** Attributes that configure the harness: changing one restarts it. */
const HARNESS_ATTRIBUTES = [
  "api",
  "model",
  "base-url",
  "system-prompt",
  "system-prompt-from",
  "shell",
  "max-steps",
  "bundle-url",
  "permissions",
];
const VIEW_ATTRIBUTES = ["heading", "placeholder", "files"];

/** Boot steps as the user reads them, and their share of the progress bar. */
const STEPS = {
  worker: ["Starting the worker", 0.02],
  manifest: ["Reading the bundle", 0.03],
  runtime: ["Loading Python (Pyodide)", 0.7],
  packages: ["Loading the agent's packages", 0.15],
  storage: ["Opening the workspace", 0.03],
  harness: ["Starting the agent", 0.06],
  shell: ["Loading the shell", 0.04],
};

/** What to do when booting fails at a step. */
const BOOT_HINTS = {
  worker:
    "The browser did not start the agent's worker; the reason and what to do are below. The bundle is where the bundle-url attribute (or the baseUrl option) says, or beside widget.mjs.",
  manifest: "The bundle is incomplete or not served. Serve the whole directory made by `pyharness build`.",
  runtime: "Pyodide did not load. Serve .wasm as application/wasm and .mjs as text/javascript, and serve the whole bundle.",
  packages: "A wheel of the bundle did not load. Rebuild it with `pyharness build` and serve all of it.",
  storage:
    'The workspace could not be opened: close it in the other tab or window that has it, choose another workspace name, or set storage: "memory" in the options property.',
  harness: "An option was refused. Check the attributes and the options property (model, max-steps, …).",
  shell: "The shell module did not load. Rebuild the bundle with `pyharness build`, or remove the shell attribute.",
};

export class PyharnessChat extends HTMLElement {
  static get observedAttributes() {
    return [...HARNESS_ATTRIBUTES, ...VIEW_ATTRIBUTES];
  }

  #options = {};
  #suggestions = [];
  /** @type {import("../page/pyharness.d.ts").Harness | null} */
  #harness = null;
  /** @type {import("../page/pyharness.d.ts").Run | null} */
  #run = null;
  /** @type {ReturnType<ChatLog["startTurn"]> | null} the running prompt's answer, where an approval is asked */
  #turn = null;
  #generation = 0; // bumps on every (re)start: late results of an older boot are dropped
  #scheduled = false;
  #ready = deferred();
  #ui;
  #log;
  #files;
  #previewPanel;
  #threads;
  #tray; // the files pasted or dropped, waiting for the next prompt
  #storageWarned = false;
  #takeOver = false; // the next boot asks another tab for the workspace

  constructor() {
    super();
    const root = this.attachShadow({ mode: "open" });
    this.#ui = buildUi(root);
    this.#log = new ChatLog(this.#ui.log);
    this.#files = new FilesPanel(this.#ui.files);
    this.#previewPanel = new PreviewPanel(this.#ui.preview, this.#ui.previewToggle, (open) => this.#setPreviewOpen(open));
    this.#tray = new AttachmentTray(this.#ui.tray);
    this.#threads = new ThreadList(this.#ui.threads, this.#ui.threadsToggle, {
      onNew: () => this.#changeThread((threads) => threads.create()),
      onSwitch: (id) => this.#changeThread((threads) => threads.switch(id)),
      onDelete: (id) => this.#changeThread((threads) => threads.delete(id)),
    });
    const { form, input, stop, toggle } = this.#ui;
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      this.#submit();
    });
    input.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
        e.preventDefault();
        this.#submit();
      } else if (e.key === "Escape" && this.#run) {
        this.cancel();
      }
    });
    input.addEventListener("input", () => this.#autosize());
    // Files pasted into the composer or dropped on it wait in the tray.
    input.addEventListener("paste", (e) => {
      const files = filesOf(e.clipboardData);
      if (files.length === 0) return;
      e.preventDefault();
      this.#tray.add(files);
    });
    form.addEventListener("dragover", (e) => {
      if (e.dataTransfer?.types?.includes("Files")) e.preventDefault();
    });
    form.addEventListener("drop", (e) => {
      const files = filesOf(e.dataTransfer);
      if (files.length === 0) return;
      e.preventDefault();
      this.#tray.add(files);
      input.focus();
    });
    stop.addEventListener("click", () => this.cancel());
    toggle.addEventListener("click", () => this.#setFilesOpen(this.#ui.root.dataset.files !== "open"));
    this.#ui.previewToggle.addEventListener("click", () => {
      if (this.#previewPanel.isOpen) this.#previewPanel.close();
      else this.#previewPanel.open();
    });
  }

  connectedCallback() {
    this.#renderView();
    if (!this.#ui.root.dataset.files) {
      const attr = this.getAttribute("files");
      this.#setFilesOpen(
        attr === "closed" || attr === "none" ? false : this.getBoundingClientRect().width === 0 || this.getBoundingClientRect().width > 620,
      );
    }
    if (!this.#harness) this.#schedule();
  }

  disconnectedCallback() {
    // A move in the document disconnects and reconnects at once: only stop if it stays out.
    queueMicrotask(() => {
      if (!this.isConnected) this.#stop();
    });
  }

  attributeChangedCallback(name, oldValue, newValue) {
    if (oldValue === newValue) return;
    if (HARNESS_ATTRIBUTES.includes(name)) this.#schedule();
    else this.#renderView();
    if (name === "files" && (newValue === "open" || newValue === "closed")) this.#setFilesOpen(newValue === "open");
  }

  /** What attributes cannot carry: the API key, page tools, fetch, shell limits, … */
  get options() {
    return this.#options;
  }

  set options(value) {
    this.#options = value ?? {};
    this.#schedule();
  }

  /** Prompts offered as buttons before the first message. */
  get suggestions() {
    return this.#suggestions;
  }

  set suggestions(value) {
    this.#suggestions = Array.isArray(value) ? value.map(String) : [];
    if (this.#harness && !this.#ui.log.querySelector(".msg")) this.#showEmpty();
  }

  /** The running harness, or null while booting or after a failure.
   * @returns {import("../page/pyharness.d.ts").Harness | null} */
  get harness() {
    return this.#harness;
  }

  /** Resolves with the harness once booted (a restart makes a new promise).
   * @returns {Promise<import("../page/pyharness.d.ts").Harness>} */
  get ready() {
    return this.#ready.promise;
  }

  get running() {
    return this.#run !== null;
  }

  /** Send a prompt as if typed; resolves with the run's result.
   * @param {string} text @returns {Promise<import("../page/pyharness.d.ts").RunResult>} */
  async send(text) {
    const harness = this.#harness ?? (await this.ready);
    if (this.#run) throw new Error("a run is in progress: wait for it or cancel() it");
    return this.#runPrompt(harness, String(text));
  }

  /** Cancel the current run, if any. */
  cancel() {
    this.#run?.cancel();
  }

  /** Start the harness again (a new worker). A persistent workspace comes back as it
   * was, files and threads; with storage "memory" they are dropped.
   * @returns {Promise<import("../page/pyharness.d.ts").Harness>} */
  restart() {
    this.#schedule();
    return this.ready;
  }

  /** Re-read the files panel (after the page wrote files with harness.fs). */
  refreshFiles() {
    return this.#files.refresh();
  }

  // -------------------------------------------------------------------------
  // Boot

  #schedule() {
    if (this.#scheduled) return;
    this.#scheduled = true;
    // Wait for the page's own module scripts (they run before DOMContentLoaded) and for
    // the rest of the current task: attributes and properties set right after the element
    // is created or upgraded, in the same script or a later one, count for one boot.
    void pageScriptsRan().then(() =>
      setTimeout(() => {
        this.#scheduled = false;
        if (this.isConnected) void this.#start();
      }, 0),
    );
  }

  #stop() {
    this.#generation++;
    this.#harness?.close();
    this.#harness = null;
    this.#files.detach();
    this.#threads.detach();
    this.#previewPanel.close();
    this.#ui.previewToggle.disabled = true;
  }

  async #start() {
    this.#stop();
    const generation = this.#generation;
    if (this.#ready.settled) this.#ready = deferred();
    this.#log.clear();
    this.#setBusy(true);
    this.#renderView();
    let options;
    try {
      options = this.#harnessOptions();
    } catch (error) {
      return this.#bootFailed(error, { title: "The widget is not configured", hint: error.message });
    }
    this.#setStatus("booting", "Starting…");
    this.#progress({ step: "worker", state: "start" }, options.shell);
    try {
      const harness = await createHarness({
        ...options,
        onProgress: (p) => {
          if (generation === this.#generation) this.#progress(p, options.shell);
          options.onProgress?.(p);
        },
      });
      if (generation !== this.#generation) return harness.close();
      this.#harness = harness;
    } catch (error) {
      if (generation !== this.#generation) return;
      const step = error.step ?? "worker";
      return this.#bootFailed(error, { title: `pyharness could not start (step '${step}')`, hint: BOOT_HINTS[step] });
    }
    this.#takeOver = false;
    this.#ui.boot.hidden = true;
    // A persistent workspace brings its conversation back: drawn before the widget is ready.
    await this.#showThread(this.#harness, generation);
    if (generation !== this.#generation) return;
    this.#watchWorkspace(this.#harness, generation);
    // The files panel follows the harness's change journal: no listing after a run.
    this.#harness.subscribe((event) => {
      if (event.type === "file_change" && generation === this.#generation) {
        this.#files.applyChange(event);
        this.#previewPanel.applyChange(event);
      }
    });
    this.#previewPanel.attach(this.#harness);
    const inMemory = this.#inMemoryElsewhere(this.#harness) || this.#inMemoryOnly(this.#harness);
    this.#setStatus("ready", inMemory ? "Ready (in memory)" : "Ready");
    this.#setBusy(false);
    this.#ready.resolve(this.#harness);
    this.dispatchEvent(new CustomEvent("pyharness-ready", { bubbles: true, detail: { harness: this.#harness } }));
    const harness = this.#harness;
    await Promise.all([this.#files.attach(harness.fs, () => harness.git()), this.#threads.attach(harness.threads)]);
  }

  /** Redraw the current thread from its transcript: prompts, text, reasoning, tool cards,
   * errors, and runs cut off by a reload (shown as interrupted). */
  async #showThread(harness, generation = this.#generation) {
    let events = [];
    try {
      ({ events } = await harness.threads.transcript());
    } catch (error) {
      this.#log.notice({ kind: "error", title: "The conversation could not be loaded", message: error.message });
    }
    if (generation !== this.#generation) return;
    this.#log.clear();
    if (events.length === 0) return this.#showEmpty();
    /** @type {ReturnType<ChatLog["startTurn"]> | null} the answer of the last prompt drawn */
    let turn = null;
    let slice = performance.now();
    for (const event of events) {
      if (event.type === "run_start") {
        const images = await imagesOf(harness.fs, event.attachments);
        if (generation !== this.#generation) return;
        this.#log.addUser(event.prompt, images);
        turn = this.#log.startTurn();
      } else {
        turn?.event(event);
      }
      if (performance.now() - slice > 8) {
        await yieldToPage();
        if (generation !== this.#generation) return;
        slice = performance.now();
      }
    }
  }

  /** The workspace is open in another tab, so this harness keeps its files in memory. */
  #inMemoryElsewhere(harness) {
    return harness.storage?.kind === "memory" && /open in another tab/.test(harness.storage.reason ?? "");
  }

  /** The browser gave this page no storage (OPFS), so the files live in memory only. */
  #inMemoryOnly(harness) {
    return harness.storage?.kind === "memory" && /OPFS is not available/.test(harness.storage.reason ?? "");
  }

  /** A second tab is told, and chooses: keep working in memory (as it is), or take the
   * workspace over (the other tab saves, lets go and says so). The tab that lost it says
   * so and can take it back. */
  #watchWorkspace(harness, generation) {
    const takeOver = () => {
      this.#takeOver = true;
      return this.restart();
    };
    if (this.#inMemoryOnly(harness)) {
      this.#log.notice({
        kind: "info",
        title: "Files are kept in memory only",
        message:
          "This browser does not let this page keep files (in a frame of another site, or on a page that is not a secure context): the files and the conversation are lost when the page reloads or closes. Download the workspace to keep what you need.",
        detail: harness.storage?.reason,
        action: "Download the workspace",
        onAction: () => downloadWorkspace(harness),
      });
    } else if (this.#inMemoryElsewhere(harness)) {
      this.#log.notice({
        kind: "info",
        title: "This workspace is open in another tab",
        message:
          "Here the files and the conversation are kept in memory only, and lost when this tab closes. Take the workspace over to work on its saved files here: the other tab saves what it has and lets go.",
        action: "Take it over here",
        onAction: takeOver,
      });
    }
    void harness.closed.then((error) => {
      if (generation !== this.#generation || error?.code !== "EBUSY") return;
      this.#harness = null;
      this.#setStatus("error", "Taken over");
      this.#setBusy(true);
      this.#log.notice({
        kind: "error",
        title: "This workspace was taken over by another tab",
        message: "What this tab had was saved before it let go; it no longer works on the workspace.",
        detail: error.message,
        action: "Take it back",
        onAction: takeOver,
      });
    });
  }

  /** Say so once when changes stop reaching the browser's storage (h.storage.error). */
  #checkStorage(harness) {
    const error = harness.storage?.error;
    if (!error) {
      this.#storageWarned = false;
      return;
    }
    if (this.#storageWarned) return;
    this.#storageWarned = true;
    this.#log.notice({
      kind: "error",
      title: "Changes are not being saved in this browser",
      message:
        error.code === "ENOSPC"
          ? "The browser's storage for this site is full. The files and the conversation are kept in this session and saved again once there is room: delete large files, or other workspaces."
          : "The browser refused to save the workspace. The files and the conversation are kept in this session only; download what you need.",
      detail: error.message,
    });
  }

  /** New, switch or delete a thread (from the thread list), then show the current one. */
  async #changeThread(change) {
    const harness = this.#harness;
    if (!harness || this.#run) return;
    await change(harness.threads);
    if (harness !== this.#harness) return;
    await this.#showThread(harness);
    this.#files.startRun(); // nothing is "fresh" in another conversation
    this.#ui.input.focus({ preventScroll: true });
  }

  #bootFailed(error, { title, hint }) {
    this.#ui.boot.hidden = true;
    this.#setStatus("error", "Not running");
    this.#setBusy(true);
    this.#log.notice({
      kind: "error",
      title,
      message: hint,
      detail: error.message === hint ? undefined : error.message,
      action: "Try again",
      onAction: () => this.restart(),
    });
    this.#ready.reject(error);
    this.dispatchEvent(new CustomEvent("pyharness-boot-error", { bubbles: true, detail: { error } }));
  }

  /** createHarness options: the attributes, then the options property on top. */
  #harnessOptions() {
    const attr = (name) => this.getAttribute(name) ?? undefined;
    const { model: modelOption, ...rest } = this.#options;
    const model = { ...defined({ api: attr("api"), baseUrl: attr("base-url"), model: attr("model") }), ...modelOption };
    if (!model.api) {
      throw new Error(
        'Choose a model: set the api and model attributes (e.g. api="openai-chat" model="gpt-4.1-mini"), or the options property ({model: {…}}).',
      );
    }
    /** @type {Record<string, any>} */
    const options = {
      ...defined({
        systemPrompt: this.#systemPrompt(),
        maxSteps: this.hasAttribute("max-steps") ? Number(attr("max-steps")) : undefined,
        shell: this.hasAttribute("shell") || undefined,
        baseUrl: attr("bundle-url"),
        permissions: this.#permissions(),
      }),
      // A rule that says "ask" is answered by the user, in the run (unless the page
      // answers itself with its own onApproval).
      onApproval: (request, { signal }) => this.#approve(request, signal),
      // the model reads what the Preview's site said (its preview_errors tool)
      preview: true,
      ...rest,
      model,
    };
    if (this.#takeOver) options.takeOver = true;
    return options;
  }

  /** The permissions attribute: the option as JSON text. */
  #permissions() {
    const text = this.getAttribute("permissions");
    if (text === null) return undefined;
    try {
      return JSON.parse(text);
    } catch (error) {
      throw new Error(
        `permissions: not JSON (${error.message}); e.g. permissions='{"write": "ask", "bash": {"*": "ask", "ls *": "allow"}}'.`,
      );
    }
  }

  /** Ask the user, inline in the run, whether a call may run. */
  #approve(request, signal) {
    if (this.#turn === null) return "deny"; // no run is drawn here: nobody could answer
    return this.#turn.approval(request, signal).answer;
  }

  #systemPrompt() {
    const selector = this.getAttribute("system-prompt-from");
    if (selector) {
      const source = /** @type {ParentNode} */ (this.getRootNode()).querySelector?.(selector) ?? document.querySelector(selector);
      if (!source) throw new Error(`system-prompt-from: no element matches '${selector}'.`);
      return source.textContent.trim();
    }
    return this.getAttribute("system-prompt") ?? undefined;
  }

  /** @param {{step: string, state: string, bytes?: number}} progress @param {boolean} shell */
  #progress({ step, state, bytes }, shell) {
    const { boot, bar, fill, label, detail } = this.#ui;
    boot.hidden = false;
    const order = Object.keys(STEPS).filter((s) => shell || s !== "shell");
    const total = order.reduce((n, s) => n + STEPS[s][1], 0);
    const index = order.indexOf(step);
    const done = order.slice(0, Math.max(index, 0)).reduce((n, s) => n + STEPS[s][1], 0) + (state === "done" ? (STEPS[step]?.[1] ?? 0) : 0);
    const percent = Math.round((100 * done) / total);
    fill.style.width = `${percent}%`;
    bar.setAttribute("aria-valuenow", String(percent));
    label.textContent = `${STEPS[step]?.[0] ?? step}…`;
    detail.textContent = bytes ? `${(bytes / 1e6).toFixed(1)} MB` : `${percent}%`;
  }

  // -------------------------------------------------------------------------
  // Runs

  #submit() {
    const text = this.#ui.input.value.trim();
    if ((!text && this.#tray.size === 0) || !this.#harness || this.#run) return;
    this.#ui.input.value = "";
    this.#autosize();
    void this.#runPrompt(this.#harness, text, this.#tray.take(), planning(this.#ui.plan) ? { mode: "plan" } : {});
  }

  /** "Run this plan" under a plan run: false when a run is in progress. @param {string} plan */
  #runPlan(plan) {
    if (!this.#harness || this.#run) return false;
    void this.#runPrompt(this.#harness, "Run this plan.", [], { plan });
    return true;
  }

  /** @param {File[]} [files] attached to the prompt @param {{mode?: "plan", plan?: string}} [how] a plan run, or a plan to carry out */
  async #runPrompt(harness, text, files = [], how = {}) {
    const attachments = files.map((file) => ({ name: file.name, type: file.type, data: file }));
    const run = harness.prompt(text, attachments.length ? { attachments, ...how } : how);
    const images = files.filter((f) => /^image\//.test(f.type)).map((f) => ({ url: URL.createObjectURL(f), name: f.name }));
    this.#run = run;
    this.#setBusy(true);
    this.#setStatus("running", "Working…");
    this.#files.startRun();
    this.#threads.setRunning(true);
    this.#log.addUser(text, images);
    const turn = this.#log.startTurn();
    this.#turn = turn;
    let changed = false; // the run changed files: it can be undone
    const subsChanged = new Set(); // ... and which of its subagents did (each its own undo)
    let planned = null; // a plan run's plan, for review
    const unsubscribe = harness.subscribe((e) => {
      // its own calls' changes, and its subagents' (run ids under its own)
      if (e.type === "file_change" && (e.runId === run.id || e.runId?.startsWith(`${run.id}/`))) {
        changed = true;
        // a nested subagent's change is its outer subagents' too (their checkpoints hold it)
        for (let i = e.runId.indexOf("/", run.id.length + 1); i !== -1; i = e.runId.indexOf("/", i + 1))
          subsChanged.add(e.runId.slice(0, i));
        if (e.runId !== run.id) subsChanged.add(e.runId);
      }
    });
    this.#ui.log.setAttribute("aria-busy", "true");
    let result;
    try {
      let slice = performance.now(); // when this stretch of work without a break began
      let last = slice;
      for await (const event of run) {
        if (performance.now() - last > 1) slice = performance.now(); // we waited for it
        turn.event(event);
        if (event.type === "plan") planned = event.text;
        this.dispatchEvent(new CustomEvent("pyharness-event", { bubbles: true, detail: event }));
        if (event.type === "tool_end") this.#checkStorage(harness);
        // Events already queued are handed out without a task boundary: after a burst,
        // give the page's own timers and input a turn every few milliseconds.
        last = performance.now();
        if (last - slice > 8) {
          await yieldToPage();
          slice = last = performance.now();
        }
      }
      result = await run.done;
    } catch (error) {
      turn.fail(error);
      result = { text: "", stopReason: "error", error: { code: error.code ?? "EIO", message: error.message } };
      // An attachment refused before anything was sent: the text and the files are put
      // back in the composer, as they were.
      if ((error.code === "EFBIG" || error.code === "EINVAL") && !this.#ui.input.value) {
        this.#ui.input.value = text;
        this.#tray.add(files);
        this.#autosize();
      }
    } finally {
      unsubscribe();
      this.#run = null;
      if (this.#turn === turn) this.#turn = null;
      this.#ui.log.setAttribute("aria-busy", "false");
      this.#threads.setRunning(false);
    }
    if (changed && harness === this.#harness) {
      turn.offerUndo(undoControl({ diff: () => harness.diff(run.id), revert: (opts) => harness.revert(run.id, opts) }));
      for (const id of subsChanged) {
        turn.subagents
          .get(id)
          ?.offerUndo(undoControl({ diff: () => harness.diff(id), revert: (opts) => harness.revert(id, opts) }, "this subagent"));
      }
    }
    if (planned !== null && harness === this.#harness) turn.offerPlan(planControl(planned, (plan) => this.#runPlan(plan)));
    if (harness === this.#harness) {
      this.#setBusy(false);
      this.#setStatus("ready", "Ready");
      void this.#threads.refresh(); // a first prompt names its thread
      this.#checkStorage(harness);
      this.#ui.input.focus({ preventScroll: true });
    }
    this.dispatchEvent(new CustomEvent("pyharness-run-end", { bubbles: true, detail: result }));
    return result;
  }

  // -------------------------------------------------------------------------
  // View

  #renderView() {
    const { heading, input, root, toggle, model } = this.#ui;
    heading.textContent = this.getAttribute("heading") ?? "pyharness";
    input.placeholder = this.getAttribute("placeholder") ?? "Ask the agent to write, run or change files…";
    if (this.getAttribute("files") === "none") root.dataset.files = "none";
    else if (root.dataset.files === "none") root.dataset.files = "open";
    toggle.hidden = root.dataset.files === "none";
    const m = {
      ...defined({ api: this.getAttribute("api") ?? undefined, model: this.getAttribute("model") ?? undefined }),
      ...this.#options.model,
    };
    model.textContent = m.api === "scripted" ? "scripted model · offline" : (m.model ?? m.api ?? "no model");
    model.title = [m.api, m.baseUrl].filter(Boolean).join(" · ");
  }

  #showEmpty() {
    this.#log.showEmpty({
      heading: this.getAttribute("heading") ?? "pyharness",
      tools: this.#harness?.tools.map((t) => t.name) ?? [],
      suggestions: this.#suggestions,
      disabled: this.#run !== null,
      onPick: (text) => {
        if (this.#harness && !this.#run) void this.#runPrompt(this.#harness, text);
      },
    });
  }

  #setBusy(busy) {
    const { send, stop, input } = this.#ui;
    const running = this.#run !== null;
    send.hidden = running;
    stop.hidden = !running;
    send.disabled = busy;
    input.setAttribute("aria-disabled", String(busy && !running));
    this.#log.setSuggestionsDisabled(busy);
  }

  #setStatus(state, text) {
    this.#ui.status.dataset.state = state;
    this.#ui.statusText.textContent = text;
    this.dataset.state = state;
  }

  #setFilesOpen(open) {
    const { root, toggle } = this.#ui;
    if (root.dataset.files === "none") return;
    root.dataset.files = open ? "open" : "closed";
    toggle.setAttribute("aria-expanded", String(open));
    if (open) this.#previewPanel?.close(); // the side shows one of them
  }

  /** The Preview panel opened or closed (widget-preview.mjs): it takes the Files panel's place. */
  #setPreviewOpen(open) {
    const { root, previewToggle } = this.#ui;
    root.dataset.preview = open ? "open" : "closed";
    previewToggle.setAttribute("aria-expanded", String(open));
    if (open && root.dataset.files === "open") this.#setFilesOpen(false);
  }

  #autosize() {
    const { input } = this.#ui;
    input.style.height = "auto";
    input.style.height = `${Math.min(input.scrollHeight, 180)}px`;
  }
}

/** @type {CSSStyleSheet | null} */
let sheet = null;

/**
 * The widget's styles as one constructed stylesheet, shared by every widget of the page
 * and adopted by each shadow root: a page whose CSP has `style-src 'self'` (no
 * 'unsafe-inline') refuses a `<style>` element, not a constructed sheet.
 * @param {ShadowRoot} shadow
 */
function adoptStyles(shadow) {
  if (sheet === null) {
    sheet = new CSSStyleSheet();
    sheet.replaceSync(STYLE);
  }
  shadow.adoptedStyleSheets = [sheet];
}

function buildUi(shadow) {
  adoptStyles(shadow);
  const heading = h("span", { class: "heading" });
  const model = h("span", { class: "model", part: "model" });
  const statusText = h("span", {}, "Starting…");
  const status = h("span", { class: "status", role: "status" }, h("span", { class: "dot" }), statusText);
  const toggle = h(
    "button",
    {
      type: "button",
      class: "ghost",
      "aria-controls": "files",
      "aria-expanded": "true",
      title: "Show or hide the files panel",
      "aria-label": "Files",
    },
    icon("panel"),
    h("span", { class: "btn-label" }, "Files"),
  );
  const threadsToggle = h(
    "button",
    {
      type: "button",
      class: "ghost",
      "aria-controls": "threads",
      "aria-expanded": "false",
      title: "Conversations kept with this workspace",
      disabled: true,
      "aria-label": "Threads",
    },
    icon("threads"),
    h("span", { class: "btn-label" }, "Threads"),
  );
  const threads = h("div", { class: "threads", id: "threads", part: "threads", role: "dialog", "aria-label": "Threads", hidden: true });
  const previewToggle = h(
    "button",
    {
      type: "button",
      class: "ghost",
      "aria-controls": "preview",
      "aria-expanded": "false",
      title: "Show the site the agent builds",
      disabled: true,
      "aria-label": "Preview",
    },
    icon("eye"),
    h("span", { class: "btn-label" }, "Preview"),
  );
  const preview = h("section", { class: "preview", id: "preview", part: "preview", "aria-label": "Preview" });
  const fill = h("div", { class: "fill" });
  const bar = h(
    "div",
    {
      class: "bar",
      role: "progressbar",
      "aria-label": "Loading pyharness",
      "aria-valuemin": "0",
      "aria-valuemax": "100",
      "aria-valuenow": "0",
    },
    fill,
  );
  const label = h("span", {}, "Starting…");
  const detail = h("span", {});
  const boot = h("div", { class: "boot", part: "progress", hidden: true }, h("div", { class: "boot-label" }, label, detail), bar);
  const log = h("div", { class: "log", part: "log", role: "log", "aria-live": "polite", "aria-label": "Conversation", tabindex: "0" });
  const input = h("textarea", { id: "input", rows: "1", enterkeyhint: "send", autocomplete: "off", spellcheck: "true" });
  const tray = h("div", { class: "tray", part: "attachments", "aria-label": "Attached files", hidden: true });
  const send = h("button", { type: "submit", class: "send", "aria-label": "Send", title: "Send (Enter)", disabled: true }, icon("send"));
  const plan = planToggle();
  const stop = h(
    "button",
    { type: "button", class: "stop", "aria-label": "Cancel the run", title: "Cancel (Esc)", hidden: true },
    icon("stop"),
  );
  const form = h(
    "form",
    { class: "composer", part: "composer" },
    h("label", { class: "sr-only", for: "input" }, "Message to the agent"),
    tray,
    h("div", { class: "field" }, input, plan, send, stop),
    h(
      "div",
      { class: "hint", "aria-hidden": "true" },
      h("kbd", {}, "Enter"),
      " to send · ",
      h("kbd", {}, "Shift"),
      "+",
      h("kbd", {}, "Enter"),
      " for a new line · paste or drop files to attach them",
    ),
  );
  const files = h("aside", { class: "files", id: "files", part: "files", "aria-label": "Files" });
  const root = h(
    "div",
    { class: "root", part: "root" },
    h(
      "header",
      { part: "header" },
      h("div", { class: "brand" }, h("span", { class: "mark", "aria-hidden": "true" }, icon("mark")), heading),
      model,
      h("span", { class: "spacer" }),
      status,
      threadsToggle,
      previewToggle,
      toggle,
    ),
    boot,
    h("div", { class: "body" }, h("section", { class: "chat", "aria-label": "Chat" }, log, form), files, preview, threads),
  );
  shadow.append(root);
  return {
    root,
    heading,
    model,
    status,
    statusText,
    toggle,
    threadsToggle,
    threads,
    previewToggle,
    preview,
    boot,
    bar,
    fill,
    label,
    detail,
    log,
    input,
    tray,
    send,
    plan,
    stop,
    form,
    files,
  };
}

/** Resolves once the document's deferred and module scripts have run. */
function pageScriptsRan() {
  const navigation = /** @type {PerformanceNavigationTiming | undefined} */ (performance.getEntriesByType?.("navigation")[0]);
  if (document.readyState === "loading" || navigation?.domContentLoadedEventStart === 0) {
    return new Promise((resolve) => document.addEventListener("DOMContentLoaded", resolve, { once: true }));
  }
  return Promise.resolve();
}

/** Let the page's other tasks run (input, timers, rendering) before going on. */
function yieldToPage() {
  const scheduler = /** @type {any} */ (globalThis).scheduler;
  if (typeof scheduler?.yield === "function") return scheduler.yield();
  return new Promise((resolve) => setTimeout(resolve, 0));
}

function defined(object) {
  return Object.fromEntries(Object.entries(object).filter(([, v]) => v !== undefined));
}

function deferred() {
  const d = { settled: false };
  d.promise = new Promise((resolve, reject) => {
    d.resolve = (v) => {
      d.settled = true;
      resolve(v);
    };
    d.reject = (e) => {
      d.settled = true;
      reject(e);
    };
  });
  d.promise.catch(() => {}); // a failed boot is shown in the widget; awaiting is optional
  return d;
}

if (!customElements.get("pyharness-chat")) customElements.define("pyharness-chat", PyharnessChat);

/** Save the whole workspace as a zip (h.fs.exportZip), as the browser saves a download. */
async function downloadWorkspace(harness) {
  const name = (harness.storage?.workspace ?? "workspace").replace(/[^\w.-]+/g, "_").replace(/^_+|_+$/g, "");
  saveAs(await harness.fs.exportZip(), `${name || "workspace"}.zip`, "application/zip");
}
