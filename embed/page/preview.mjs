// h.preview(): a folder of /work shown as a website, contained like the sandbox. The
// page makes `<iframe sandbox="allow-scripts" src="<bundle>/preview.html#<origins>">`
// (an opaque origin, under the guard's own CSP: no network but the origins the page
// allows in `network.allow`, and no navigation away), then hands it the loader's source
// (preview-loader.mjs) and a MessagePort. Everything the site loads comes over that
// port, each path checked here (inside the root, no NUL, bounded) and read by the
// worker under the model's read rules (harness/preview.py). Each load's console
// (errors, warnings, log lines; bounded) is kept here and told to the worker, for the
// model's preview_errors tool.
//
// Live: a file_change under the root reloads it, debounced (a run writing 50 files
// reloads once, after the call). A reload, a navigation and close() replace or remove
// the iframe: nothing of the last load (its timers, a loop that spins) lives on.

import { HarnessError } from "./errors.mjs";

const RELOAD_AFTER_MS = 150; // quiet time after the last change before a reload
const MAX_ENTRIES = 200; // console entries kept of one load
const MAX_PATH = 4096;
const LOAD_TIMEOUT_MS = 15_000; // a load that has not fired its load event by then: "failed"

/** The Content-Type of a site file, by its extension (application/octet-stream else). */
const TYPES = {
  html: "text/html",
  htm: "text/html",
  css: "text/css",
  js: "text/javascript",
  mjs: "text/javascript",
  cjs: "text/javascript",
  json: "application/json",
  map: "application/json",
  webmanifest: "application/manifest+json",
  txt: "text/plain",
  md: "text/markdown",
  csv: "text/csv",
  xml: "application/xml",
  svg: "image/svg+xml",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  avif: "image/avif",
  ico: "image/x-icon",
  bmp: "image/bmp",
  woff: "font/woff",
  woff2: "font/woff2",
  ttf: "font/ttf",
  otf: "font/otf",
  mp3: "audio/mpeg",
  wav: "audio/wav",
  ogg: "audio/ogg",
  mp4: "video/mp4",
  webm: "video/webm",
  wasm: "application/wasm",
  pdf: "application/pdf",
};

/** @param {string} path */
function contentType(path) {
  const ext = /\.([A-Za-z0-9]+)$/.exec(path)?.[1]?.toLowerCase() ?? "";
  const type = TYPES[ext] ?? "application/octet-stream";
  return type.startsWith("text/") || type === "application/json" || type === "image/svg+xml" ? `${type}; charset=utf-8` : type;
}

/** A folder of /work as the page gives it ("/", "site", "/work/site/") → "site" ("" for the root). */
function rootOf(root) {
  if (typeof root !== "string" || root.length > MAX_PATH || root.includes("\0"))
    throw new HarnessError("EINVAL", "EINVAL: preview: root must be a folder of /work");
  const parts = root
    .replace(/^\/work(\/|$)/, "/")
    .split("/")
    .filter((p) => p !== "" && p !== ".");
  if (parts.includes("..")) throw new HarnessError("EINVAL", `EINVAL: preview: root ${JSON.stringify(root)} leaves /work`);
  return parts.join("/");
}

/** A site path from the loader ("/css/a.css") → its segments, or null when it is not one. */
function sitePath(path) {
  if (typeof path !== "string" || !path.startsWith("/") || path.length > MAX_PATH || path.includes("\0")) return null;
  const parts = path.split("/").filter((p) => p !== "" && p !== ".");
  return parts.includes("..") ? null : parts;
}

export class Preview {
  /**
   * @param {any} harness the Harness
   * @param {URL} base the bundle's folder
   * @param {string[]} allow origins the page lets the model's code reach (network.allow)
   * @param {{root?: string, entry?: string}} [options]
   */
  constructor(harness, base, allow, { root = "/", entry = "index.html" } = {}) {
    this._harness = harness;
    this.root = rootOf(root);
    const first = sitePath(`/${String(entry).replace(/^\/+/, "")}`);
    if (first === null) throw new HarnessError("EINVAL", `EINVAL: preview: entry ${JSON.stringify(entry)} is not a page of the site`);
    /** The site's page shown now ("/index.html"). */
    this.entry = `/${first.join("/")}`;
    this._src = `${new URL("preview.html", base).href}#${encodeURIComponent(JSON.stringify(allow))}`;
    this._loaderUrl = new URL("preview-loader.mjs", base).href;
    /** @type {Promise<string> | null} */
    this._loader = null;
    /** The element to mount: the site's frame fills it. */
    this.element = document.createElement("div");
    this.element.className = "pyharness-preview";
    this.element.style.cssText = "position:relative;width:100%;height:100%;min-height:0";
    /** @type {HTMLIFrameElement | null} */
    this.iframe = null;
    /** @type {"loading" | "loaded" | "failed" | "closed"} */
    this.state = "loading";
    /** This load's console, at most 200. @type {{level: "error" | "warn" | "log", text: string}[]} */
    this.entries = [];
    /** Loads so far (a reload or a navigation is a new one). */
    this.loads = 0;
    /** When the last load's load event fired (performance.now() of the page), or 0. */
    this.loadEventAt = 0;
    this._listeners = new Set();
    this._reporting = false;
    this._timer = 0;
    this._seen = -1; // the newest file_change seq seen
    this._unsubscribe = harness.subscribe((e) => this._fileChange(e));
    this.reload();
  }

  /** Told `{state, entries, loads, entry}` at each change of the state and each entry;
   * returns the unsubscribe function. @param {(preview: Preview) => void} listener */
  subscribe(listener) {
    this._listeners.add(listener);
    return () => this._listeners.delete(listener);
  }

  /** Load the page again (or another page of the site: `entry`), from scratch. @param {string} [entry] */
  reload(entry) {
    if (this.state === "closed") return;
    if (entry !== undefined) {
      const parts = sitePath(`/${String(entry).replace(/^\/+/, "")}`);
      if (parts === null) throw new HarnessError("EINVAL", `EINVAL: preview: ${JSON.stringify(entry)} is not a page of the site`);
      this.entry = `/${parts.join("/")}`;
    }
    clearTimeout(this._timer);
    this._timer = 0;
    this.loads++;
    this.entries = [];
    this.state = "loading";
    const load = this.loads;
    const seen = this._seen;
    const frame = document.createElement("iframe");
    frame.setAttribute("sandbox", "allow-scripts");
    frame.setAttribute("title", `Preview of ${this.entry}`);
    frame.style.cssText = "position:absolute;inset:0;width:100%;height:100%;border:0;background:#fff";
    const channel = new MessageChannel();
    channel.port1.onmessage = (event) => void this._answer(load, channel.port1, event.data);
    frame.addEventListener(
      "load",
      () => {
        void this._loaderSource().then(
          (loader) =>
            frame.contentWindow?.postMessage({ type: "start", loader, port: channel.port2, options: { entry: this.entry } }, "*", [
              channel.port2,
            ]),
          (err) => this._fail(load, `the preview's loader could not be fetched: ${err.message}`),
        );
      },
      { once: true },
    );
    frame.src = this._src;
    this.iframe?.remove();
    this.iframe = frame;
    this._port?.close();
    this._port = channel.port1;
    this._seenAtLoad = seen;
    this.element.append(frame);
    setTimeout(() => {
      if (this.loads === load && this.state === "loading")
        this._fail(load, `the page did not finish loading within ${LOAD_TIMEOUT_MS / 1000} s`);
    }, LOAD_TIMEOUT_MS);
    this._told();
  }

  /** Remove the preview: its frame goes, with everything running in it. */
  close() {
    if (this.state === "closed") return;
    clearTimeout(this._timer);
    this._unsubscribe();
    this._port?.close();
    this.iframe?.remove();
    this.iframe = null;
    this.state = "closed";
    this._told();
  }

  _loaderSource() {
    if (this._loader === null) {
      this._loader = fetch(this._loaderUrl).then((r) => {
        if (!r.ok) throw new Error(`GET ${this._loaderUrl} answered ${r.status}; serve the whole bundle`);
        return r.text();
      });
      this._loader.catch(() => (this._loader = null));
    }
    return this._loader;
  }

  /** A file changed: under the root, the preview reloads once things are quiet. */
  _fileChange(event) {
    if (event.type !== "file_change") return;
    this._seen = Math.max(this._seen, event.seq);
    const prefix = this.root === "" ? "/work/" : `/work/${this.root}/`;
    if (this.state === "closed" || !(`${event.path}/`.startsWith(prefix) || event.path === `/work/${this.root}`)) return;
    clearTimeout(this._timer);
    this._timer = setTimeout(() => this.reload(), RELOAD_AFTER_MS);
  }

  /** One message of the loader of load `load` (older loads' are ignored). */
  async _answer(load, port, message) {
    if (load !== this.loads || this.state === "closed" || message === null || typeof message !== "object") return;
    if (message.type === "get" && Number.isInteger(message.id)) {
      const reply = await this._file(message.path);
      if (load !== this.loads) return;
      const transfer = reply.data ? [reply.data] : [];
      port.postMessage({ type: "file", id: message.id, ...reply }, transfer);
    } else if (message.type === "entry" && typeof message.text === "string" && ["error", "warn", "log"].includes(message.level)) {
      if (this.entries.length >= MAX_ENTRIES) return;
      this.entries.push({ level: message.level, text: message.text.slice(0, 2100) });
      this._told();
    } else if (message.type === "load_event") {
      this.loadEventAt = performance.now(); // (the bench's: the site's load event, on the page's clock)
    } else if (message.type === "loaded" && this.state === "loading") {
      this.state = "loaded";
      this._told();
    } else if (message.type === "failed" && typeof message.message === "string") {
      this._fail(load, message.message.slice(0, 2000));
    } else if (message.type === "navigate" && typeof message.path === "string" && sitePath(message.path) !== null) {
      this.reload(message.path.endsWith("/") ? `${message.path}index.html` : message.path);
    }
  }

  /** A site file for the loader: {ok, status, contentType, data} or {ok: false, status, message}. */
  async _file(path) {
    const parts = sitePath(path);
    if (parts === null) return { ok: false, status: 400, message: "not a path of the site" };
    const file = [this.root, ...parts].filter(Boolean).join("/");
    let data;
    try {
      data = await this._read(file);
    } catch (err) {
      if (err.code === "EISDIR") {
        try {
          data = await this._read(`${file}/index.html`);
          return { ok: true, status: 200, contentType: contentType("index.html"), data };
        } catch (inner) {
          return failure(inner);
        }
      }
      return failure(err);
    }
    return { ok: true, status: 200, contentType: contentType(file), data };
  }

  async _read(path) {
    const reply = await this._harness._request({ type: "preview", request: JSON.stringify({ op: "read", path }) });
    return reply.data;
  }

  _fail(load, message) {
    if (load !== this.loads || this.state === "closed") return;
    if (this.entries.length < MAX_ENTRIES) this.entries.push({ level: "error", text: message });
    this.state = "failed";
    this._told();
  }

  /** Tell the listeners, and the worker (the model's preview_errors reads it; what
   * happens at once is told in one report). */
  _told() {
    for (const listener of this._listeners) {
      try {
        listener(this);
      } catch (err) {
        console.error("pyharness: a preview listener threw", err);
      }
    }
    if (this._reporting) return;
    this._reporting = true;
    queueMicrotask(() => {
      this._reporting = false;
      this._report();
    });
  }

  _report() {
    const report = {
      op: "report",
      root: `/work/${this.root}`,
      entry: this.entry,
      load: this.loads,
      state: this.state,
      seen: this._seenAtLoad ?? -1,
      entries: this.entries,
    };
    this._harness._request({ type: "preview", request: JSON.stringify(report) }).catch(() => {});
  }
}

/** A failed read as the loader's answer: the status a static server would give. */
function failure(err) {
  const code = err?.code ?? "EIO";
  const status = { ENOENT: 404, EISDIR: 404, ENOTDIR: 404, EACCES: 403, EFBIG: 413, EINVAL: 400 }[code] ?? 500;
  return { ok: false, status, message: String(err?.message ?? err).replace(/^[A-Z]+: /, "") };
}
