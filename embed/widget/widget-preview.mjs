// The widget's Preview, beside Files: the site the agent builds, shown live by
// h.preview() (embed/page/preview.mjs: contained, reloaded after each change under its
// folder), with its console under it (errors first: what the model's preview_errors tool
// reads too). It opens by itself the first time a run writes an HTML file (on that
// file's folder), and on demand from its header button (the last HTML file a run wrote,
// else /index.html). Reload and Close are buttons; Close gives the focus back.

import { h, icon } from "./widget-dom.mjs";

const LEVEL = { error: "Error", warn: "Warning", log: "Log" };

export class PreviewPanel {
  /** @type {any} the harness */
  #harness = null;
  /** @type {any} the open h.preview(), or null */
  #preview = null;
  #unsubscribe = () => {};
  /** @type {{root: string, entry: string} | null} the last HTML file a run wrote */
  #last = null;
  #opened = false; // it opened by itself once: a later HTML file does not reopen it

  /** @param {HTMLElement} panel @param {HTMLButtonElement} toggle @param {(open: boolean) => void} onOpen */
  constructor(panel, toggle, onOpen) {
    this.panel = panel;
    this.toggle = toggle;
    this.onOpen = onOpen;
    this.path = h("span", { class: "path" });
    this.reloadButton = h(
      "button",
      { type: "button", class: "icon-btn", title: "Reload the preview", "aria-label": "Reload the preview" },
      icon("refresh"),
    );
    this.closeButton = h(
      "button",
      { type: "button", class: "icon-btn", title: "Close the preview", "aria-label": "Close the preview" },
      icon("close"),
    );
    this.stage = h("div", { class: "preview-stage" });
    this.state = h("div", { class: "preview-state", role: "status" });
    this.console = h("ul", { class: "preview-console", "aria-label": "The preview's console" });
    panel.append(
      h("div", { class: "files-head" }, h("h2", {}, "Preview", this.path), this.reloadButton, this.closeButton),
      this.stage,
      // (it scrolls: reachable with the keyboard)
      h(
        "div",
        { class: "preview-foot", role: "region", tabindex: "0", "aria-label": "Preview status and console" },
        this.state,
        this.console,
      ),
    );
    this.reloadButton.addEventListener("click", () => this.#preview?.reload());
    this.closeButton.addEventListener("click", () => {
      this.close();
      this.toggle.focus({ preventScroll: true });
    });
  }

  /** @param {any} harness */
  attach(harness) {
    this.close();
    this.#harness = harness;
    this.#last = null;
    this.#opened = false;
    this.toggle.disabled = false;
  }

  /** A file_change: a run that wrote an HTML file opens the preview on it (the first time). */
  applyChange(event) {
    if (event.type !== "file_change" || event.runId === null || event.kind === "deleted" || !/\.html?$/i.test(event.path)) return;
    const rel = event.path.replace(/^\/work\/?/, "");
    const cut = rel.lastIndexOf("/");
    this.#last = { root: cut < 0 ? "/" : rel.slice(0, cut), entry: rel.slice(cut + 1) };
    if (this.#preview === null && !this.#opened) {
      this.#opened = true;
      this.open();
    }
  }

  get isOpen() {
    return this.#preview !== null;
  }

  /** Show the preview (of the last HTML file a run wrote, else /index.html). */
  open() {
    if (this.#harness === null || this.#preview !== null) return;
    const { root, entry } = this.#last ?? { root: "/", entry: "index.html" };
    const preview = this.#harness.preview({ root, entry });
    this.#preview = preview;
    preview.iframe?.setAttribute("title", "Preview of the site");
    this.stage.replaceChildren(preview.element);
    this.#unsubscribe = preview.subscribe(() => this.#render());
    this.#render();
    this.onOpen(true);
  }

  close() {
    if (this.#preview === null) return;
    this.#unsubscribe();
    this.#preview.close();
    this.#preview = null;
    this.stage.replaceChildren();
    this.console.replaceChildren();
    this.onOpen(false);
  }

  #render() {
    const preview = this.#preview;
    if (preview === null) return;
    preview.iframe?.setAttribute("title", `Preview of ${preview.entry}`);
    this.path.textContent = `/work/${preview.root ? `${preview.root}/` : ""}${preview.entry.replace(/^\//, "")}`;
    const errors = preview.entries.filter((e) => e.level === "error").length;
    const warnings = preview.entries.filter((e) => e.level === "warn").length;
    const what = { loading: "Loading…", loaded: "Loaded", failed: "Did not load", closed: "Closed" }[preview.state];
    this.state.textContent = `${what} · ${errors} ${errors === 1 ? "error" : "errors"}, ${warnings} ${warnings === 1 ? "warning" : "warnings"}`;
    this.state.dataset.state = errors > 0 ? "error" : preview.state;
    // errors first, then warnings, then the log (each in its order)
    const order = ["error", "warn", "log"];
    const sorted = [...preview.entries].sort((a, b) => order.indexOf(a.level) - order.indexOf(b.level));
    this.console.replaceChildren(
      ...sorted.map((e) =>
        h(
          "li",
          { "data-level": e.level },
          h("span", { class: "preview-level" }, LEVEL[e.level] ?? e.level),
          " ",
          h("span", { class: "preview-text" }, e.text),
        ),
      ),
    );
  }
}
