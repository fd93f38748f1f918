// The widget's files panel: the /work tree through h.fs, a viewer, download, upload
// (button or drag and drop) to seed the workspace, and delete (a second click confirms).
// Files changed since the last run started are marked. Names and paths are the model's
// choice: they are shown with their hidden characters visible (visibleName).

import { formatBytes, h, icon, visibleName, visibleText } from "./widget-dom.mjs";

const MAX_ENTRIES = 2000; // listed before the tree says it is cut
const VIEW_LIMIT = 256 * 1024; // bytes shown in the viewer; download for the rest

export class FilesPanel {
  /** @param {HTMLElement} aside */
  constructor(aside) {
    this.aside = aside;
    this.fs = null;
    this.signatures = null; // path → "size:mtime" at the last refresh
    this.fresh = new Set(); // paths changed by the last run (or uploaded)
    this.tracking = false; // mark changes only once a run started
    this.collapsed = new Set();
    this.viewing = null; // {path, bytes}
    this.confirming = null; // the path whose delete button asks "Delete? yes / no"
    this.deleting = null; // the path being deleted
    this.refreshing = null;
    this.again = false;

    this.input = h("input", { type: "file", multiple: true, hidden: true, tabindex: "-1" });
    const upload = h(
      "button",
      { type: "button", class: "icon-btn", "aria-label": "Upload files to /work", title: "Upload files" },
      icon("upload"),
    );
    const refresh = h("button", { type: "button", class: "icon-btn", "aria-label": "Refresh files", title: "Refresh" }, icon("refresh"));
    this.tree = h("div", { class: "tree", role: "navigation", "aria-label": "Files in /work" });
    this.vpath = h("span", { class: "vpath" });
    this.vsize = h("span", { class: "vsize" });
    this.download = h(
      "button",
      { type: "button", class: "icon-btn", "aria-label": "Download this file", title: "Download" },
      icon("download"),
    );
    const close = h("button", { type: "button", class: "icon-btn", "aria-label": "Close the file", title: "Close" }, icon("close"));
    this.vbody = h("div", { class: "viewer-body", style: "overflow:auto;min-height:0" });
    this.viewer = h(
      "div",
      { class: "viewer", hidden: true, part: "file-viewer" },
      h("div", { class: "viewer-head" }, this.vpath, this.vsize, this.download, close),
      this.vbody,
    );
    this.foot = h("div", { class: "files-foot", role: "status", "aria-live": "polite" });
    aside.append(
      h("div", { class: "files-head" }, h("h2", {}, "Files", h("span", { class: "path" }, "/work")), upload, refresh, this.input),
      this.tree,
      this.viewer,
      this.foot,
    );

    upload.addEventListener("click", () => this.input.click());
    this.input.addEventListener("change", () => {
      void this.upload([...this.input.files]);
      this.input.value = "";
    });
    refresh.addEventListener("click", () => void this.refresh());
    close.addEventListener("click", () => this.close());
    this.download.addEventListener("click", () => this.#download());
    aside.addEventListener("dragover", (e) => {
      if (!this.fs || !e.dataTransfer?.types.includes("Files")) return;
      e.preventDefault();
      aside.classList.add("dragging");
    });
    aside.addEventListener("dragleave", () => aside.classList.remove("dragging"));
    aside.addEventListener("drop", (e) => {
      aside.classList.remove("dragging");
      if (!this.fs || !e.dataTransfer?.files.length) return;
      e.preventDefault();
      void this.upload([...e.dataTransfer.files]);
    });
    this.#renderTree([]);
  }

  /** Show the files of a (new) harness. */
  attach(fs) {
    this.fs = fs;
    this.signatures = null;
    this.fresh.clear();
    this.tracking = false;
    this.confirming = null;
    this.close();
    this.#say("");
    return this.refresh();
  }

  detach() {
    this.fs = null;
    this.confirming = null;
    this.close();
    this.#renderTree([]);
  }

  /** A run starts: forget the marks of the last one, mark what this one changes. */
  startRun() {
    this.fresh.clear();
    this.tracking = true;
  }

  /** Re-read the tree (and the open file). Calls while one runs coalesce into one more. */
  refresh() {
    if (this.refreshing) {
      this.again = true;
      return this.refreshing;
    }
    this.refreshing = (async () => {
      do {
        this.again = false;
        await this.#refreshOnce();
      } while (this.again);
    })().finally(() => {
      this.refreshing = null;
    });
    return this.refreshing;
  }

  /** Delete a file, or a folder and everything in it, then show the tree as it is. */
  async remove(path) {
    if (!this.fs || this.deleting) return;
    this.deleting = path;
    this.confirming = null;
    this.#renderTree(this.nodes, this.cut);
    const name = path.split("/").pop();
    try {
      await this.fs.rm(path, { recursive: true });
      this.#say(`Deleted ${name}`);
      const under = (p) => p === path || p.startsWith(`${path}/`);
      for (const set of [this.fresh, this.collapsed]) for (const p of [...set]) if (under(p)) set.delete(p);
      if (this.viewing && under(this.viewing.path)) this.close();
    } catch (err) {
      this.#say(`Could not delete ${name}: ${err.message}`, true);
    } finally {
      this.deleting = null;
    }
    await this.refresh();
  }

  async upload(files) {
    if (!this.fs || !files.length) return;
    const done = [];
    try {
      for (const file of files) {
        await this.fs.writeFile(file.name, new Uint8Array(await file.arrayBuffer()));
        this.fresh.add(file.name);
        done.push(`${file.name} (${formatBytes(file.size)})`);
      }
      this.#say(`Uploaded ${done.join(", ")} to /work`);
    } catch (err) {
      this.#say(`Upload failed: ${err.message}`, true);
    }
    await this.refresh();
  }

  async open(path) {
    if (!this.fs) return;
    try {
      const bytes = await this.fs.readFile(path);
      this.viewing = { path, bytes };
      this.#renderViewer();
      this.#markCurrent();
    } catch (err) {
      this.#say(`Could not open ${path}: ${err.message}`, true);
    }
  }

  close() {
    this.viewing = null;
    this.viewer.hidden = true;
    this.aside.classList.remove("split");
    this.#markCurrent();
  }

  async #refreshOnce() {
    const fs = this.fs;
    if (!fs) return;
    const budget = { left: MAX_ENTRIES };
    let nodes;
    try {
      nodes = await walk(fs, ".", budget);
    } catch (err) {
      if (this.fs === fs) this.#say(`Could not list /work: ${err.message}`, true);
      return;
    }
    if (this.fs !== fs) return;
    const signatures = new Map();
    flatten(nodes, (n) => signatures.set(n.path, n.type === "dir" ? "dir" : `${n.size}:${n.mtime}`));
    if (this.signatures && this.tracking) {
      for (const [path, sig] of signatures) if (this.signatures.get(path) !== sig && sig !== "dir") this.fresh.add(path);
    }
    const viewed = this.viewing && this.signatures?.get(this.viewing.path) !== signatures.get(this.viewing.path);
    this.signatures = signatures;
    this.#renderTree(nodes, budget.left < 0);
    if (viewed) {
      if (signatures.has(this.viewing.path)) await this.open(this.viewing.path);
      else this.close();
    }
  }

  #renderTree(nodes, cut = false) {
    this.nodes = nodes;
    this.cut = cut;
    const root = /** @type {ShadowRoot | Document} */ (this.aside.getRootNode());
    const focused = /** @type {HTMLElement | null} */ (root.activeElement)?.dataset;
    if (!nodes.length) {
      this.tree.replaceChildren(
        h(
          "div",
          { class: "files-empty" },
          this.fs ? "No files yet. Upload some, or ask the agent to write one." : "Files appear here once the agent is ready.",
        ),
      );
      return;
    }
    this.tree.replaceChildren(this.#list(nodes));
    if (cut) this.tree.append(h("div", { class: "files-empty" }, `Only the first ${MAX_ENTRIES} entries are shown.`));
    this.#markCurrent();
    if (this.confirming) this.tree.querySelector(".confirm .yes")?.focus();
    else if (focused?.path) this.tree.querySelector(`[data-path="${CSS.escape(focused.path)}"]`)?.focus();
    else if (focused?.delete) this.tree.querySelector(`[data-delete="${CSS.escape(focused.delete)}"]`)?.focus();
  }

  #list(nodes) {
    return h(
      "ul",
      {},
      ...nodes.map((node) => {
        const fresh = node.type !== "dir" && this.fresh.has(node.path);
        if (node.type === "dir") {
          const open = !this.collapsed.has(node.path);
          const button = h(
            "button",
            { type: "button", class: "entry dir", "data-path": node.path, "aria-expanded": String(open), title: visibleText(node.path) },
            icon("chevron"),
            icon("folder"),
            h("span", { class: "name" }, ...visibleName(node.name)),
          );
          button.addEventListener("click", () => {
            if (this.collapsed.has(node.path)) this.collapsed.delete(node.path);
            else this.collapsed.add(node.path);
            this.#renderTree(this.nodes, this.cut);
          });
          return h("li", {}, this.#row(node, button), open && node.children.length ? this.#list(node.children) : null);
        }
        const path = visibleText(node.path);
        const button = h(
          "button",
          {
            type: "button",
            class: `entry file${fresh ? " fresh" : ""}`,
            "data-path": node.path,
            title: fresh ? `${path} (changed)` : path,
          },
          icon("file"),
          h("span", { class: "name" }, ...visibleName(node.name)),
          h("span", { class: "size" }, node.size === undefined ? "" : formatBytes(node.size)),
        );
        button.addEventListener("click", () => void this.open(node.path));
        return h("li", {}, this.#row(node, button));
      }),
    );
  }

  /** An entry and its delete button, or the "Delete? yes / no" that the button became. */
  #row(node, entry) {
    const name = visibleText(node.name);
    const what = node.type === "dir" ? `the folder ${name} and everything in it` : name;
    if (this.confirming !== node.path && this.deleting !== node.path) {
      const del = h(
        "button",
        { type: "button", class: "icon-btn del", "data-delete": node.path, "aria-label": `Delete ${what}`, title: "Delete" },
        icon("trash"),
      );
      del.addEventListener("click", () => {
        this.confirming = node.path;
        this.#renderTree(this.nodes, this.cut);
      });
      return h("div", { class: "row" }, entry, del);
    }
    const busy = this.deleting === node.path;
    const yes = h(
      "button",
      { type: "button", class: "yes", "aria-label": `Yes, delete ${what}`, disabled: busy },
      busy ? "deleting…" : "yes",
    );
    const no = h("button", { type: "button", class: "no", "aria-label": "No, keep it", disabled: busy }, "no");
    const cancel = () => {
      this.confirming = null;
      this.#renderTree(this.nodes, this.cut);
      this.tree.querySelector(`[data-delete="${CSS.escape(node.path)}"]`)?.focus();
    };
    yes.addEventListener("click", () => void this.remove(node.path));
    no.addEventListener("click", cancel);
    const confirm = h("span", { class: "confirm", role: "group", "aria-label": `Delete ${what}?` }, "Delete?", yes, no);
    confirm.addEventListener("keydown", (e) => {
      if (e.key !== "Escape") return;
      e.stopPropagation();
      cancel();
    });
    return h("div", { class: "row confirming" }, entry, confirm);
  }

  #markCurrent() {
    for (const entry of this.tree.querySelectorAll(".entry.file")) {
      entry.setAttribute("aria-current", String(entry.dataset.path === this.viewing?.path));
    }
  }

  #renderViewer() {
    const { path, bytes } = this.viewing;
    this.vpath.replaceChildren(...visibleName(path));
    this.vpath.title = `/work/${visibleText(path)}`;
    this.vsize.textContent = formatBytes(bytes.length);
    this.viewer.hidden = false;
    this.aside.classList.add("split");
    if (isBinary(bytes)) {
      this.vbody.replaceChildren(h("div", { class: "note" }, `Binary file, ${formatBytes(bytes.length)}. Download it to open it.`));
      return;
    }
    const shown = bytes.length > VIEW_LIMIT ? bytes.subarray(0, VIEW_LIMIT) : bytes;
    // Contents show their hidden characters too, as code does in answers (download for the bytes).
    const text = new TextDecoder().decode(shown);
    const pre = h("pre", { tabindex: "0", "aria-label": `Contents of ${visibleText(path)}` }, ...visibleName(text, { lines: true }));
    this.vbody.replaceChildren(pre);
    if (shown !== bytes)
      this.vbody.append(h("div", { class: "note" }, `Showing the first ${formatBytes(VIEW_LIMIT)}; download the file for the rest.`));
  }

  #download() {
    if (!this.viewing) return;
    const { path, bytes } = this.viewing;
    const url = URL.createObjectURL(new Blob([bytes]));
    const a = h("a", { href: url, download: visibleText(path.split("/").pop()) }); // saved without hidden characters
    a.click();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  }

  /** The status line; the names in it are the model's, so their hidden characters show. */
  #say(text, error = false) {
    this.foot.textContent = visibleText(text);
    this.foot.classList.toggle("error", error);
  }
}

/** The tree under `dir`: directories first, then files, each sorted by name. */
async function walk(fs, dir, budget) {
  const entries = await fs.readdir(dir);
  const nodes = [];
  for (const entry of entries) {
    if (--budget.left < 0) break;
    const path = dir === "." ? entry.name : `${dir}/${entry.name}`;
    if (entry.type === "dir") {
      nodes.push({ path, name: entry.name, type: "dir", children: await walk(fs, path, budget) });
    } else {
      const stat = await fs.stat(path).catch(() => null);
      nodes.push({ path, name: entry.name, type: entry.type, size: stat?.size, mtime: stat?.mtime });
    }
  }
  return nodes.sort((a, b) => ((a.type === "dir") === (b.type === "dir") ? 0 : a.type === "dir" ? -1 : 1));
}

function flatten(nodes, visit) {
  for (const node of nodes) {
    visit(node);
    if (node.children) flatten(node.children, visit);
  }
}

function isBinary(bytes) {
  return bytes.subarray(0, 8000).includes(0);
}
