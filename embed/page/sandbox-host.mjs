// The page's side of the sandbox (only the page can make an iframe): a hidden
// `<iframe sandbox="allow-scripts">` (opaque origin) whose srcdoc carries a CSP with no
// network at all and one inline script pinned by its hash (sandbox-frame.js). The page
// fetches the sandbox's files itself, from its own origin, and hands them to the frame
// with a MessagePort whose other end goes to the harness worker. Removing the iframe
// kills the sandbox and everything it started.
//
// A sandbox is used for one run at most: the worker asks for a fresh one when a run that
// used it ends, and when it tears one down. A spare is booted as soon as the sandbox in
// use runs its first command, so the replacement is ready when it is needed. The hard
// deadline of every command is kept here too, on the page's clock, which nothing in the
// sandbox can flood or delay: at `timeoutMs` + 250 ms the iframe goes.
import { PAGE_SANDBOX, receiver } from "../shared/protocol.mjs";
import { sandboxSrcdoc } from "./trusted-types.mjs";

/** How long a new frame's script has to say it runs (frame_ready) before the sandbox is
 * given up as failed: it runs at once unless the page's CSP or Trusted Types refuse it. */
const FRAME_START_MS = 5000;

const FILES = {
  "pyodide.mjs": "pyodide/pyodide.mjs",
  "pyodide.asm.mjs": "pyodide/pyodide.asm.mjs",
  "pyodide.asm.wasm": "pyodide/pyodide.asm.wasm",
  "python_stdlib.zip": "pyodide/python_stdlib.zip",
  // The sandbox's own lock: micropip and the bundle's extra packages (pyharness build
  // --package), none of the harness's wheels; installed only when `pip` asks.
  "pyodide-lock.json": "pyodide/sandbox-lock.json",
  "sandbox.mjs": "sandbox.mjs",
};

export class SandboxHost {
  /**
   * @param {URL} base the bundle directory
   * @param {(report: {type: string, generation: number, ms?: number, probes?: Record<string, unknown>, message?: string}) => void} onReport
   *   the boot report of the sandbox in use
   * @param {(started: {port: MessagePort, generation: number, reason: string}) => void} onPort
   *   a sandbox to hand to the harness worker
   */
  constructor(base, onReport, onPort) {
    this._base = base;
    this._onReport = onReport;
    this._onPort = onPort;
    this._files = null; // Promise<Record<string, Blob>>, fetched once
    this._frame = null; // the sandbox in use
    this._spare = null; // a fresh one booting or booted, never handed out yet
    this._warming = false; // a spare is being created
    this._deadline = null; // {generation, command, timer}: the command in flight
    this.generation = 0;
    this._closed = false;
    /** @type {string | null} why no frame's script runs on this page, once one did not */
    this._refused = null;
    this._listener = (event) => this._receive(event);
    window.addEventListener("message", this._listener);
  }

  /**
   * Replace the sandbox in use by a fresh one (the spare when there is one) and hand it
   * to the worker. `generation`: the one to replace; a request about another one (an
   * older sandbox, already replaced) changes nothing.
   */
  async replace(reason, generation = this._frame?.generation) {
    if (this._closed || (this._frame !== null && generation !== this._frame.generation)) return;
    this.kill();
    const frame = this._spare ?? (await this._create());
    this._spare = null;
    if (frame === null || this._closed || this._frame !== null) return frame?.element.remove();
    this._frame = frame;
    if (frame.report) this._onReport(frame.report);
    this._onPort({ port: frame.channel.port1, generation: frame.generation, reason });
  }

  /** A command started in the sandbox of `generation`: keep its deadline here, on the
   * page's clock, and boot the sandbox that will replace this used one. */
  arm({ generation, command, ms }) {
    if (this._frame === null || generation !== this._frame.generation) return;
    this.disarm();
    const timer = setTimeout(() => {
      this._deadline = null;
      void this.replace(PAGE_SANDBOX.DEADLINE, generation);
    }, ms);
    this._deadline = { generation, command, timer };
    void this._prewarm();
  }

  /** The command ended before its deadline. */
  disarm(command) {
    if (this._deadline === null || (command !== undefined && this._deadline.command !== command)) return;
    clearTimeout(this._deadline.timer);
    this._deadline = null;
  }

  /** Remove the sandbox in use: stops its worker at once, whatever it is doing. */
  kill() {
    this.disarm();
    if (this._frame === null) return;
    this._frame.element.remove();
    this._frame = null;
  }

  close() {
    this._closed = true;
    this.kill();
    this._spare?.element.remove();
    this._spare = null;
    this.generation++;
    window.removeEventListener("message", this._listener);
  }

  async _prewarm() {
    if (this._spare !== null || this._warming) return;
    this._warming = true;
    try {
      const frame = await this._create();
      if (frame === null) return;
      if (this._closed || this._spare !== null) return void frame.element.remove();
      this._spare = frame;
    } catch {
      // The next replace() creates one itself (and reports a failure then).
    } finally {
      this._warming = false;
    }
  }

  /** A new sandbox frame, booting; its port1 is not handed out yet (what the sandbox
   * says meanwhile waits in the port). */
  async _create() {
    const generation = ++this.generation;
    const files = await this._fetchFiles();
    if (this._closed) return null;
    const channel = new MessageChannel();
    const frame = document.createElement("iframe");
    frame.setAttribute("sandbox", "allow-scripts");
    frame.setAttribute("aria-hidden", "true");
    frame.setAttribute("tabindex", "-1");
    frame.title = "pyharness sandbox";
    frame.style.cssText = "position:absolute;width:0;height:0;border:0;visibility:hidden";
    // its CSP and its one script (trusted-types.mjs), through the pyharness policy
    frame.srcdoc = sandboxSrcdoc();
    const record = { element: frame, generation, channel, files, report: null, started: false };
    if (this._refused !== null) {
      // A frame's script did not run on this page before: none will (the page's policy).
      this._fail(record, this._refused);
      return record;
    }
    // The frame's script runs while its document is parsed, before its load event: a
    // frame that loaded and said nothing a second later was refused it (the page's
    // policy), and so will every other. A frame that has not even loaded in 5 s fails alone.
    frame.addEventListener("load", () => setTimeout(() => this._neverStarted(record, true), 1000), { once: true });
    document.body.appendChild(frame);
    setTimeout(() => this._neverStarted(record, false), FRAME_START_MS);
    return record;
  }

  _receive(event) {
    const frame = [this._frame, this._spare].find((f) => f !== null && event.source === f.element.contentWindow);
    if (frame !== undefined) FROM_FRAME.receive({ host: this, frame }, event.data, () => {}); // out of turn: ignored
  }

  /** The frame's script runs: give it the sandbox's files and its port to the worker. */
  _start(frame) {
    frame.started = true;
    const probeUrl = new URL("manifest.json", this._base).href;
    // The frame's origin is opaque ("null"): "*" is the only target that reaches it.
    frame.element.contentWindow.postMessage({ type: "boot", files: frame.files, port: frame.channel.port2, probeUrl }, "*", [
      frame.channel.port2,
    ]);
    frame.files = null;
  }

  /** A frame whose script has not run: failed, and said so to the page and, through the
   * port the frame would have taken, to the worker (a shell call fails at once with it
   * instead of waiting out its deadline). A spare that failed so is handed out as it is:
   * its report and its port say why. When it had loaded, the frames made after it fail
   * at once. */
  _neverStarted(frame, loaded) {
    if (frame.started || frame.report !== null || !frame.element.isConnected) return;
    const message =
      `the sandbox frame's script did not run (${loaded ? "its frame loaded without it" : `not within ${FRAME_START_MS / 1000} s`}): `
      + "the page's Content-Security-Policy (a srcdoc frame is under it too) must allow the frame's inline script by its hash "
      + "(FRAME_HASH of sandbox-frame.mjs), blob: and 'wasm-unsafe-eval' in script-src and data: in worker-src "
      + '(docs/security.md, "If your page has its own CSP")';
    if (loaded) this._refused = message;
    this._fail(frame, message);
  }

  /** The frame failed before its script ran: its report and its port say why. */
  _fail(frame, message) {
    frame.files = null;
    frame.element.remove(); // a script that runs late starts nothing
    frame.channel.port2.postMessage({ type: "boot_error", message });
    this._report(frame, { type: "boot_error", message });
  }

  /**
   * The sandbox's one boot report.
   * @param {any} frame
   * @param {{type: string, ms?: number, probes?: Record<string, unknown>, message?: string}} report
   */
  _report(frame, { type, ms, probes, message }) {
    frame.report = {
      type,
      generation: frame.generation,
      ms,
      probes: type === "ready" && probes ? { ...probes } : undefined,
      message: type === "boot_error" && message !== undefined ? message.slice(0, 2000) : undefined,
    };
    if (frame === this._frame) this._onReport(frame.report);
  }

  _fetchFiles() {
    if (this._files === null) {
      this._files = Promise.all(
        Object.entries(FILES).map(async ([name, path]) => {
          const url = new URL(path, this._base);
          const response = await fetch(url);
          if (!response.ok) throw new Error(`GET ${url} answered ${response.status}; serve the whole bundle`);
          return [name, await response.blob()];
        }),
      ).then(Object.fromEntries);
      this._files.catch(() => (this._files = null)); // try again on the next start
    }
    return this._files;
  }
}

/** What a sandbox frame may say (embed/shared/protocol.mjs, frameToPage), and what each does. */
const FROM_FRAME = receiver(
  "frameToPage",
  {
    frame_ready: ({ host, frame }) => host._start(frame),
    ready: ({ host, frame }, message) => host._report(frame, message),
    boot_error: ({ host, frame }, message) => host._report(frame, message),
  },
  {
    frameBooting: ({ frame }) => !frame.started,
    frameStarted: ({ frame }) => frame.started && frame.report === null,
  },
);
