// The page's side of the sandbox (only the page can make an iframe): a hidden
// `<iframe sandbox="allow-scripts">` (opaque origin) whose srcdoc carries a CSP with no
// network at all and one inline script pinned by its hash (sandbox-frame.js). The page
// fetches the sandbox's files itself, from its own origin, and hands them to the frame
// with a MessagePort whose other end goes to the harness worker. Removing the iframe
// kills the sandbox and everything it started.
import { FRAME_HASH, FRAME_SCRIPT } from "./sandbox-frame.mjs";

export const SANDBOX_CSP =
  `default-src 'none'; script-src '${FRAME_HASH}' blob: 'wasm-unsafe-eval'; worker-src data:; ` +
  "base-uri 'none'; form-action 'none'";

const FILES = {
  "pyodide.mjs": "pyodide/pyodide.mjs",
  "pyodide.asm.mjs": "pyodide/pyodide.asm.mjs",
  "pyodide.asm.wasm": "pyodide/pyodide.asm.wasm",
  "python_stdlib.zip": "pyodide/python_stdlib.zip",
  "pyodide-lock.json": "pyodide/pyodide-lock.json",
  "sandbox.mjs": "sandbox.mjs",
};

export class SandboxHost {
  /**
   * @param {URL} base the bundle directory
   * @param {(report: {type: string, generation: number, ms?: number, probes?: object, message?: string}) => void} onReport
   */
  constructor(base, onReport) {
    this._base = base;
    this._onReport = onReport;
    this._files = null; // Promise<Record<string, Blob>>, fetched once
    this._frame = null;
    this.generation = 0;
    this._listener = (event) => this._receive(event);
    window.addEventListener("message", this._listener);
  }

  /** Start a fresh sandbox (killing any current one); resolves with the harness's port. */
  async start() {
    this.kill();
    const generation = ++this.generation;
    const channel = new MessageChannel();
    const files = await this._fetchFiles();
    if (generation !== this.generation) return null; // killed or restarted meanwhile
    const frame = document.createElement("iframe");
    frame.setAttribute("sandbox", "allow-scripts");
    frame.setAttribute("aria-hidden", "true");
    frame.setAttribute("tabindex", "-1");
    frame.title = "pyharness sandbox";
    frame.style.cssText = "position:absolute;width:0;height:0;border:0;visibility:hidden";
    frame.srcdoc = `<!doctype html><meta http-equiv="Content-Security-Policy" content="${SANDBOX_CSP}"><script>${FRAME_SCRIPT}</script>`;
    this._frame = { element: frame, generation, channel, files, reported: false, started: false };
    document.body.appendChild(frame);
    return { port: channel.port1, generation };
  }

  /** Remove the sandbox's iframe: stops its worker at once, whatever it is doing. */
  kill() {
    if (this._frame === null) return;
    this._frame.element.remove();
    this._frame = null;
  }

  close() {
    this.kill();
    this.generation++;
    window.removeEventListener("message", this._listener);
  }

  _receive(event) {
    const frame = this._frame;
    if (frame === null || event.source !== frame.element.contentWindow) return;
    const data = event.data;
    if (!data || typeof data !== "object") return;
    if (data.type === "frame_ready" && !frame.started) {
      frame.started = true;
      const probeUrl = new URL("manifest.json", this._base).href;
      // The frame's origin is opaque ("null"): "*" is the only target that reaches it.
      frame.element.contentWindow.postMessage({ files: frame.files, port: frame.channel.port2, probeUrl }, "*", [frame.channel.port2]);
      return;
    }
    if ((data.type === "ready" || data.type === "boot_error") && frame.started && !frame.reported) {
      frame.reported = true;
      this._onReport({
        type: data.type,
        generation: frame.generation,
        ms: typeof data.ms === "number" ? data.ms : undefined,
        probes: data.type === "ready" && data.probes && typeof data.probes === "object" ? { ...data.probes } : undefined,
        message: typeof data.message === "string" ? data.message.slice(0, 2000) : undefined,
      });
    }
  }

  _fetchFiles() {
    if (this._files === null) {
      this._files = Promise.all(Object.entries(FILES).map(async ([name, path]) => {
        const url = new URL(path, this._base);
        const response = await fetch(url);
        if (!response.ok) throw new Error(`GET ${url} answered ${response.status}; serve the whole bundle`);
        return [name, await response.blob()];
      })).then(Object.fromEntries);
      this._files.catch(() => (this._files = null)); // try again on the next start
    }
    return this._files;
  }
}
