// The preview's loader: runs in the site's frame (an opaque origin of its own, under the
// guard's CSP: embed/preview/preview.html) and shows one page of the site the way a
// static web server would serve it. Every file comes from the page over one
// MessagePort ({type: "get", id, path} → {type: "file", id, ok, status, contentType,
// data}), each path being the site's own ("/index.html", "/css/a.css": the page adds
// its root and checks it). What the page's HTML, CSS and modules reference is served
// as blob: URLs made here (the only URLs the CSP lets load besides data: and the
// origins the page allows):
//
// - HTML: parsed (DOMParser, which runs nothing), every src/href/srcset/poster/style
//   reference of the site replaced by its file's blob: URL, `<style>` and style
//   attributes' CSS too, then written into this document after a probe script;
// - CSS: `url(...)` and `@import` rewritten (an imported sheet is rewritten itself);
// - ES modules: their static and literal dynamic imports rewritten (es-module-lexer
//   finds them), `import.meta.url` made the module's own address on the site;
// - at run time: fetch() and XMLHttpRequest of the site's URLs, and src/href set from
//   script (a MutationObserver), resolve through the same files; a `<base>` of the
//   site's own address makes relative URLs resolve as they would on a server.
//
// The probe collects what the page would show in a console, per load and bounded:
// uncaught errors, unhandled rejections, console.error/warn/log, resources that failed
// (404, a module's syntax error), requests the CSP blocked. They go to the page
// ({type: "entry", level, text}), then {type: "loaded"} after the load event. A click
// on a link of the site asks the page to show that page ({type: "navigate", path}).
//
// Nothing here is a boundary: the site's scripts share this realm and may tamper with
// all of it (the containment is the frame's origin and the guard's CSP). The worst they
// can do is ask for files of the preview's root, which the page bounds and checks.

import { init, parse } from "es-module-lexer/js";

/** The site's own origin in URLs (never fetched: `.invalid` never resolves, and the CSP
 * does not list it): relative URLs resolve against it, and the files are looked up by
 * its paths. */
const SITE = "http://site.preview.invalid";
const MAX_FILES = 2000; // files one load may ask for
const MAX_ENTRIES = 200; // console entries one load reports
const MAX_TEXT = 2000; // characters of one entry
const SETTLE_MS = 250; // after the load event, before the load counts as done
const MAX_FAILED_TOLD = 20; // files that could not be served, told one by one (then counted)

/** @param {MessagePort} port @param {{entry: string}} options */
export function start(port, options) {
  new Loader(port).show(options.entry);
}

class Loader {
  /** @param {MessagePort} port */
  constructor(port) {
    this.port = port;
    /** @type {Map<number, (answer: any) => void>} */
    this.waiting = new Map();
    this.nextId = 0;
    /** @type {Map<string, Promise<string>>} kind:path → its blob: URL */
    this.urls = new Map();
    /** @type {Map<string, string>} blob: URL → the site's path (for messages) */
    this.paths = new Map();
    this.requested = 0;
    this.entries = 0;
    this.failed = 0; // files that could not be served
    const gone = URL.createObjectURL(new Blob([]));
    URL.revokeObjectURL(gone);
    this.missing = gone; // a URL that fails to load, as a 404 would
    port.onmessage = (event) => {
      const answer = event.data;
      const resolve = this.waiting.get(answer?.id);
      if (resolve === undefined) return;
      this.waiting.delete(answer.id);
      resolve(answer);
    };
  }

  /** One entry of the console, bounded. @param {string} level @param {string} text */
  entry(level, text) {
    if (this.entries >= MAX_ENTRIES) return;
    this.entries++;
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it replaces
    const shown = text.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
    const clipped = shown.length > MAX_TEXT ? `${shown.slice(0, MAX_TEXT)}… (${shown.length - MAX_TEXT} more characters)` : shown;
    this.port.postMessage({
      type: "entry",
      level,
      text:
        this.entries === MAX_ENTRIES
          ? `${clipped}\n(the rest of this load's console is left out: ${MAX_ENTRIES} entries at most)`
          : clipped,
    });
  }

  /** A file of the site: {ok, status, contentType, data, message}. @param {string} path */
  get(path) {
    if (++this.requested > MAX_FILES) {
      if (this.requested === MAX_FILES + 1) {
        this.entry(
          "error",
          `this page asks for more than ${MAX_FILES} files: the preview serves ${MAX_FILES} a load, the rest fail to load`,
        );
      }
      return Promise.resolve({ ok: false, status: 413, message: "over the preview's files a load", quiet: true });
    }
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      this.port.postMessage({ type: "get", id, path });
    });
  }

  /** The site's file a URL names (a folder's index.html), or null when it is not the
   * site's. @param {URL} url */
  path(url) {
    if (url.origin !== SITE) return null;
    let path = url.pathname;
    try {
      path = decodeURIComponent(path);
    } catch {}
    return path.endsWith("/") ? `${path}index.html` : path;
  }

  /** How a URL is shown in a message: the site's path for its blob: URLs. @param {string} url */
  shown(url) {
    return this.paths.get(url.split("#")[0]) ?? url;
  }

  /**
   * The blob: URL of a site file served as `kind` ("raw", "css", "module"), made once; a
   * file that cannot be served is reported (by `from`) and gets a URL that fails.
   * @param {string} path @param {string} kind @param {string} from @param {string[]} [chain]
   */
  url(path, kind, from, chain = []) {
    if (kind === "module" && chain.includes(path)) {
      this.entry(
        "error",
        `circular import: ${[...chain, path].join(" → ")} (the preview cannot serve modules that import each other in a cycle)`,
      );
      return Promise.resolve(this.missing);
    }
    const key = `${kind}:${path}`;
    let made = this.urls.get(key);
    if (made === undefined) {
      made = this.make(path, kind, from, chain);
      this.urls.set(key, made);
    }
    return made;
  }

  async make(path, kind, from, chain) {
    const file = await this.get(path);
    if (!file.ok) {
      if (file.quiet) return this.missing;
      if (++this.failed <= MAX_FAILED_TOLD)
        this.entry("error", `${file.status ?? 404} ${path} (from ${from}): ${file.message ?? "not found"}`);
      return this.missing;
    }
    let body = file.data;
    let type = file.contentType;
    if (kind === "css") {
      body = await this.css(new TextDecoder().decode(file.data), path);
      type = "text/css";
    } else if (kind === "module") {
      body = await this.module(new TextDecoder().decode(file.data), path, [...chain, path]);
      type = "text/javascript";
    }
    const url = URL.createObjectURL(new Blob([body], { type }));
    this.paths.set(url, path);
    return url;
  }

  /** A site URL as `kind`, or null when `ref` is not the site's (another origin, data:). */
  ref(ref, base, kind, from, chain) {
    if (!ref || /^(blob:|data:|#|javascript:|mailto:|about:)/i.test(ref.trim())) return null;
    let url;
    try {
      url = new URL(ref.trim(), SITE + base);
    } catch {
      return null;
    }
    const path = this.path(url);
    if (path === null) return null;
    return this.url(path, kind, from, chain).then((u) => u + url.hash);
  }

  /** A style sheet with its url() and @import references served. @param {string} text @param {string} path */
  async css(text, path) {
    const pattern = /@import\s+(?:url\(\s*)?(["']?)([^"')\s;]+)\1\s*\)?|url\(\s*(["']?)([^"')]+)\3\s*\)/g;
    const jobs = [];
    for (const m of text.matchAll(pattern)) {
      const importing = m[2] !== undefined;
      const ref = importing ? m[2] : m[4];
      jobs.push(this.ref(ref, path, importing ? "css" : "raw", path)?.then((url) => [m, url]));
    }
    const done = new Map((await Promise.all(jobs.filter(Boolean))).map(([m, url]) => [m.index, url]));
    return text.replace(pattern, (whole, _q1, ref1, _q2, _ref2, offset) => {
      const url = done.get(offset);
      if (url === undefined) return whole;
      return ref1 !== undefined ? `@import url("${url}")` : `url("${url}")`;
    });
  }

  /** A module with its imports of the site served. @param {string} text @param {string} path @param {string[]} chain */
  async module(text, path, chain) {
    await init;
    let imports;
    try {
      [imports] = parse(text, path);
    } catch (err) {
      // served as it is: the browser reports the syntax error where it is
      this.entry("error", `SyntaxError in ${path}: ${String(err?.message ?? err).split("\n")[0]}`);
      return text;
    }
    const edits = [];
    for (const imp of imports) {
      // es-module-lexer 3: a static import's [start, end) is its name; a dynamic one's
      // the string with its quotes; import.meta's the two words
      if (imp.type === "import-meta") {
        edits.push([imp.start, imp.end, `({ url: ${JSON.stringify(SITE + path)} })`]);
        continue;
      }
      if (typeof imp.specifier !== "string" || imp.glob) continue; // a computed name
      const json = imp.attributesStart > -1 && /type\s*:\s*["']json["']/.test(text.slice(imp.attributesStart, imp.importEnd));
      const url = await this.ref(imp.specifier, path, json ? "raw" : "module", path, chain);
      if (url === null) continue; // a bare name, another origin
      edits.push([imp.start, imp.end, imp.type === "dynamic" ? JSON.stringify(url) : url]);
    }
    let out = text;
    for (const [s, e, value] of edits.sort((a, b) => b[0] - a[0])) out = out.slice(0, s) + value + out.slice(e);
    return out;
  }

  /** Show the site's page at `path` (a missing one: a 404 page). @param {string} path */
  async show(path) {
    const file = await this.get(path);
    let html;
    if (file.ok) {
      html = await this.html(new TextDecoder().decode(file.data), path);
    } else {
      this.entry("error", `${file.status ?? 404} ${path}: ${file.message ?? "not found"}`);
      const status = file.status ?? 404;
      html = await this.html(
        `<!doctype html><title>${status}</title><body style="font: 16px system-ui; padding: 2em"><h1>${status}</h1><p>${escapeHtml(`${path}: ${file.message ?? "not found"}`)}</p></body>`,
        path,
      );
    }
    this.write(html, path);
  }

  /** The page's HTML with its references served. @param {string} text @param {string} path */
  async html(text, path) {
    const doc = new DOMParser().parseFromString(text, "text/html");
    let base = path;
    const baseEl = doc.querySelector("base[href]");
    if (baseEl) {
      const url = new URL(baseEl.getAttribute("href") ?? "", SITE + path);
      if (url.origin === SITE) base = url.pathname;
    }
    for (const b of doc.querySelectorAll("base")) b.remove();
    for (const meta of doc.querySelectorAll("meta[http-equiv]")) {
      const equiv = meta.getAttribute("http-equiv")?.toLowerCase();
      if (equiv === "refresh") this.entry("warn", `<meta http-equiv="refresh"> is not followed in the preview (${path})`);
      if (equiv === "refresh" || equiv === "content-security-policy") meta.remove();
    }
    const jobs = [];
    const swap = (el, attr, kind) => {
      const job = this.ref(el.getAttribute(attr), base, kind, path);
      if (job) jobs.push(job.then((url) => el.setAttribute(attr, url)));
    };
    for (const el of doc.querySelectorAll("script[src]")) swap(el, "src", el.getAttribute("type") === "module" ? "module" : "raw");
    for (const el of doc.querySelectorAll("link[href]")) {
      const rel = (el.getAttribute("rel") ?? "").toLowerCase().split(/\s+/);
      swap(el, "href", rel.includes("stylesheet") ? "css" : rel.includes("modulepreload") ? "module" : "raw");
    }
    for (const el of doc.querySelectorAll("img[src], source[src], video[src], audio[src], track[src], input[src], embed[src]"))
      swap(el, "src", "raw");
    for (const el of doc.querySelectorAll("video[poster]")) swap(el, "poster", "raw");
    for (const el of doc.querySelectorAll("object[data]")) swap(el, "data", "raw");
    for (const el of doc.querySelectorAll("img[srcset], source[srcset]")) {
      const parts = (el.getAttribute("srcset") ?? "")
        .split(",")
        .map((p) => p.trim())
        .filter(Boolean);
      jobs.push(
        Promise.all(
          parts.map(async (part) => {
            const [ref, ...size] = part.split(/\s+/);
            return [(await this.ref(ref, base, "raw", path)) ?? ref, ...size].join(" ");
          }),
        ).then((served) => el.setAttribute("srcset", served.join(", "))),
      );
    }
    for (const el of doc.querySelectorAll("script:not([src])")) {
      if (el.getAttribute("type") === "module")
        jobs.push(this.module(el.textContent ?? "", base, [base]).then((t) => (el.textContent = t)));
    }
    for (const el of doc.querySelectorAll("style")) jobs.push(this.css(el.textContent ?? "", base).then((t) => (el.textContent = t)));
    for (const el of doc.querySelectorAll("[style]")) {
      const style = el.getAttribute("style") ?? "";
      if (style.includes("url(")) jobs.push(this.css(style, base).then((t) => el.setAttribute("style", t)));
    }
    await Promise.all(jobs);
    const probe = doc.createElement("script");
    probe.textContent = `(${PROBE.toString()})();`;
    const siteBase = doc.createElement("base");
    siteBase.setAttribute("href", SITE + base);
    doc.head.prepend(siteBase, probe);
    const doctype = doc.doctype ? `<!doctype ${doc.doctype.name}>` : "";
    return doctype + doc.documentElement.outerHTML;
  }

  /** Replace this document by the site's page, its probe first. */
  write(html, path) {
    if (this.failed > MAX_FAILED_TOLD) {
      this.entry(
        "error",
        `${this.failed - MAX_FAILED_TOLD} more files of this page could not be served (the first ${MAX_FAILED_TOLD} are above)`,
      );
    }
    /** What the probe (and anything else in the page) reaches. */
    window.__pyharnessPreview = Object.freeze({
      site: SITE,
      missing: this.missing,
      entry: (level, text) => this.entry(level, String(text)),
      shown: (url) => this.shown(String(url)),
      navigate: (to) => this.port.postMessage({ type: "navigate", path: String(to) }),
      // (a moment after the load event: what the page does as it starts is in this load)
      loaded: () => {
        this.port.postMessage({ type: "load_event" });
        setTimeout(() => this.port.postMessage({ type: "loaded" }), SETTLE_MS);
      },
      /** A site URL's blob: URL, as `kind`. */
      url: (href, kind) => {
        const p = this.path(new URL(href));
        return p === null ? Promise.resolve(href) : this.url(p, kind, `${path} (at run time)`);
      },
      /** A site file as a fetch() Response (a 404 as a real server answers it). */
      fetch: async (href) => {
        const p = this.path(new URL(href)) ?? "/index.html";
        const file = await this.get(p);
        if (!file.ok) {
          this.entry("error", `${file.status ?? 404} ${p} (fetch from ${path}): ${file.message ?? "not found"}`);
          return new Response(file.message ?? "not found", { status: file.status ?? 404, statusText: "Not Found" });
        }
        return new Response(file.data, { status: 200, headers: { "content-type": file.contentType } });
      },
    });
    document.open();
    document.write(html);
    document.close();
  }
}

/** The site page's first script (serialized into it): its console, errors, requests and
 * links, through `window.__pyharnessPreview`. Self-contained: nothing from outside it. */
function PROBE() {
  const hook = window.__pyharnessPreview;
  const text = (v) => {
    try {
      if (v instanceof Error) return `${v.name}: ${v.message}`;
      if (v !== null && typeof v === "object") return JSON.stringify(v) ?? String(v);
      return String(v);
    } catch {
      return String(v);
    }
  };
  for (const level of ["log", "info", "debug", "warn", "error"]) {
    const original = console[level].bind(console);
    console[level] = (...args) => {
      hook.entry(level === "warn" || level === "error" ? level : "log", args.map(text).join(" "));
      original(...args);
    };
  }
  addEventListener(
    "error",
    (event) => {
      const t = event.target;
      if (t && t !== window && t.tagName) {
        const url = t.getAttribute("src") ?? t.getAttribute("href") ?? "";
        if (url !== hook.missing) hook.entry("error", `failed to load <${t.tagName.toLowerCase()}> ${hook.shown(url)}`);
        return;
      }
      const where = event.filename ? ` (${hook.shown(event.filename)}:${event.lineno})` : "";
      hook.entry("error", `Uncaught ${event.error !== undefined && event.error !== null ? text(event.error) : event.message}${where}`);
    },
    true,
  );
  addEventListener("unhandledrejection", (event) => hook.entry("error", `Unhandled promise rejection: ${text(event.reason)}`));
  document.addEventListener("securitypolicyviolation", (event) => {
    if (event.blockedURI.startsWith(hook.site)) return; // the site's own: served below
    hook.entry(
      "error",
      `blocked by the preview's Content-Security-Policy (${event.effectiveDirective}): ${event.blockedURI || "inline"} — the preview reaches no network but the origins the page allows`,
    );
  });
  const site = (href) => {
    try {
      const url = new URL(href, document.baseURI);
      return url.origin === hook.site ? url : null;
    } catch {
      return null;
    }
  };
  const realFetch = window.fetch;
  window.fetch = (input, init) => {
    const url = site(typeof input === "string" || input instanceof URL ? String(input) : input.url);
    return url === null ? realFetch(input, init) : hook.fetch(url.href);
  };
  const open = XMLHttpRequest.prototype.open;
  const send = XMLHttpRequest.prototype.send;
  const pending = new WeakMap();
  XMLHttpRequest.prototype.open = function (method, href, async = true, ...rest) {
    const url = site(String(href));
    if (url === null) {
      pending.delete(this);
      return open.call(this, method, href, async, ...rest);
    }
    if (!async) hook.entry("error", `a synchronous XMLHttpRequest of ${url.pathname} cannot be served in the preview`);
    pending.set(this, [method, url.href]);
    return open.call(this, method, hook.missing, async);
  };
  XMLHttpRequest.prototype.send = function (body) {
    const job = pending.get(this);
    if (job === undefined) return send.call(this, body);
    hook.url(job[1], "raw").then((served) => {
      open.call(this, job[0], served, true);
      send.call(this, body);
    });
  };
  // src and href set from script: served like the HTML's own
  const attrs = ["src", "href", "poster"];
  const serve = (el) => {
    for (const attr of attrs) {
      const value = el.getAttribute?.(attr);
      if (!value || el.tagName === "A" || el.tagName === "BASE") continue;
      const url = site(value);
      if (url === null) continue;
      const kind =
        el.tagName === "LINK" && /stylesheet/i.test(el.rel) ? "css" : el.tagName === "SCRIPT" && el.type === "module" ? "module" : "raw";
      hook.url(url.href, kind).then((served) => {
        if (el.getAttribute(attr) !== value) return;
        if (el.tagName === "SCRIPT") {
          const copy = document.createElement("script");
          for (const a of el.attributes) copy.setAttribute(a.name, a.value);
          copy.setAttribute("src", served);
          el.replaceWith(copy);
        } else el.setAttribute(attr, served);
      });
    }
  };
  new MutationObserver((records) => {
    for (const record of records) {
      if (record.type === "attributes") serve(record.target);
      else
        for (const node of record.addedNodes)
          if (node.nodeType === 1) [node, ...node.querySelectorAll("[src], [href], [poster]")].forEach(serve);
    }
  }).observe(document, { subtree: true, childList: true, attributes: true, attributeFilter: attrs });
  // links of the site open in the preview; others are not followed
  document.addEventListener("click", (event) => {
    const a = event.target instanceof Element ? event.target.closest("a[href]") : null;
    if (a === null || event.defaultPrevented) return;
    const href = a.getAttribute("href") ?? "";
    if (href.startsWith("#")) return;
    event.preventDefault();
    const url = site(href);
    if (url !== null) hook.navigate(url.pathname);
    else hook.entry("warn", `a link to ${href} is not followed in the preview`);
  });
  // forms are not submitted (the CSP and the sandbox would refuse it; a refused submit
  // followed by a busy loop was measured to keep the frames' process from ending)
  const refuse = (form) => hook.entry("warn", `a form (${form.getAttribute("action") ?? "this page"}) is not submitted in the preview`);
  HTMLFormElement.prototype.submit = function () {
    refuse(this);
  };
  HTMLFormElement.prototype.requestSubmit = function () {
    refuse(this);
  };
  document.addEventListener(
    "submit",
    (event) => {
      event.preventDefault();
      if (event.target instanceof HTMLFormElement) refuse(event.target);
    },
    true,
  );
  // a navigation to a page of the site (location.href = "about.html") opens it here;
  // one elsewhere is not followed (the guard's frame-src would block it anyway, leaving
  // an error page in its place)
  window.navigation?.addEventListener("navigate", (event) => {
    if (event.hashChange || event.downloadRequest !== null) return;
    const url = site(event.destination.url);
    event.preventDefault();
    if (url !== null) hook.navigate(url.pathname);
    else hook.entry("warn", `a navigation to ${event.destination.url} is not followed in the preview`);
  });
  addEventListener("load", () => hook.loaded());
}

function escapeHtml(text) {
  return text.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
}
