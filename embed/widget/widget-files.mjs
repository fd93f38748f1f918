// The widget's files panel: the /work tree through h.fs, a viewer, download, upload
// (button or drag and drop) to seed the workspace, and delete (a second click confirms).
// Files changed since the last run started are marked. Names and paths are the model's
// choice: they are shown with their hidden characters visible (visibleName).
//
// The tree is listed folder by folder, so a big workspace costs what is on screen: the
// root is listed at attach, a folder when it is opened, and a refresh lists again the
// open folders only (a closed folder costs no readdir). A folder the user has not opened
// or closed opens by itself while the folders opened so are small (AUTO_OPEN entries in
// all), so a small workspace shows everything as it did. A folder is drawn PAGE_ROWS rows
// at a time with a "show more" button, and only the rows drawn are stat'ed (size, and the
// signature that marks a changed file).

import { formatBytes, h, icon, saveAs, visibleName, visibleText } from "./widget-dom.mjs";

const PAGE_ROWS = 500; // rows of one folder drawn at a time; "show more" draws the next
const COUNT = new Intl.NumberFormat("en"); // one formatter: toLocaleString("en") makes a new one per call
const AUTO_OPEN = 200; // entries that folders opened by themselves may hold in all
const VIEW_LIMIT = 256 * 1024; // bytes shown in the viewer; download for the rest
const CHANGE_SLICE_MS = 8; // file_change work per frame before the tree is drawn and the page gets a turn
const ROWS_PER_SLICE = 40; // rows a frame's file_change work may draw (or take away)

/** A repository's own folder (.git) or a path inside one: never opened by itself. */
const inGit = (path) => /(^|\/)\.git(\/|$)/.test(path);
const GIT_SETTLE_MS = 400; // the header's git status is read again once changes settle

export class FilesPanel {
  /** @param {HTMLElement} aside */
  constructor(aside) {
    this.aside = aside;
    this.fs = null;
    this.signatures = null; // path → "size:mtime" of the files drawn at the last refresh
    this.fresh = new Set(); // paths changed by the last run (or uploaded)
    this.tracking = false; // mark changes only once a run started
    this.folders = new Map(); // folder path → "open" | "closed", once the user or AUTO_OPEN chose
    this.listings = new Map(); // open folder ("." the root) → its nodes, folders first
    this.rows = new Map(); // folder → rows drawn (PAGE_ROWS until "show more")
    this.loading = new Set(); // folders being listed after a click
    this.focusNext = null; // the path to focus after the next drawing (the first row "show more" drew)
    this.tail = Promise.resolve(); // the panel's h.fs work, one task at a time
    this.pending = null; // a refresh queued and not started yet
    /** @type {{path: string, kind: string, from?: string | null, entry: string, size?: number | null, runId?: string | null}[]} */
    this.changes = []; // file_change events waiting for their task
    this.stale = { folders: new Set(), rows: new Set() }; // what changes applied since the last drawing touched
    this.rowPaths = new WeakMap(); // <li> drawn → the path of its row
    /** @type {{path: string, bytes: Uint8Array<ArrayBuffer>} | null} the file shown (h.fs.readFile's bytes: a copy, never shared) */
    this.viewing = null;
    this.confirming = null; // the path whose delete button asks "Delete? yes / no"
    this.deleting = null; // the path being deleted

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
    this.vbody = h("div", { class: "viewer-body" });
    this.viewer = h(
      "div",
      { class: "viewer", hidden: true, part: "file-viewer" },
      h("div", { class: "viewer-head" }, this.vpath, this.vsize, this.download, close),
      this.vbody,
    );
    this.foot = h("div", { class: "files-foot", role: "status", "aria-live": "polite" });
    // Where /work's repository stands (h.git()), when it is one: "main", and "●" with how
    // many files `git status` would list.
    this.gitBadge = h("span", { class: "git", hidden: true, part: "git-status" });
    this.gitOf = null; // () => h.git() of the attached harness
    this.gitTimer = 0; // the pending read's timer (0: none)
    this.gitDue = 0; // when it is due: a change moves it later
    aside.append(
      h(
        "div",
        { class: "files-head" },
        h("h2", {}, "Files", h("span", { class: "path" }, "/work"), this.gitBadge),
        upload,
        refresh,
        this.input,
      ),
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
    this.#renderTree();
  }

  /** Show the files of a (new) harness. The folders the user opened stay open.
   * `git`: its h.git(), for the header's branch and changes. */
  attach(fs, git = null) {
    this.fs = fs;
    this.gitOf = git;
    this.#gitLater(0);
    this.changes = []; // the last harness's, not applied yet: this one's tree is listed anew
    this.listings.clear();
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
    this.gitOf = null;
    clearTimeout(this.gitTimer);
    this.gitTimer = 0;
    this.gitBadge.hidden = true;
    this.changes = [];
    this.confirming = null;
    this.listings.clear();
    this.close();
    this.#renderTree();
  }

  /**
   * A path in /work changed (a `file_change` event, from the harness's change journal):
   * the tree is updated in place, with no listing, and what a run changed is marked.
   * Events are applied in order, a frame's worth at a time: a burst (a command that
   * writes 10,000 files sends 10,000 events, each its own message) is taken in slices of
   * at most CHANGE_SLICE_MS of work and ROWS_PER_SLICE rows drawn, and only the rows a
   * slice changed are drawn again (the others stay), so the page's timers and input get
   * a turn between slices.
   * @param {{path: string, kind: string, from?: string | null, entry: string, size?: number | null, runId?: string | null}} event
   */
  applyChange(event) {
    this.#gitLater(GIT_SETTLE_MS);
    this.changes.push(event);
    if (this.changes.length > 1) return; // a slice is queued already
    nextFrame(() => void this.#queue(() => this.#applySlice()));
  }

  /** Apply queued changes for up to CHANGE_SLICE_MS (or ROWS_PER_SLICE changes to drawn
   * rows), draw what they changed, and leave the rest to the next frame. */
  #applySlice() {
    const started = performance.now();
    const viewed = this.viewing?.path;
    let touchedView = false;
    let rows = 0; // changes to a listed folder's drawn rows (each draws at most one row)
    let done = 0;
    while (done < this.changes.length && rows < ROWS_PER_SLICE) {
      const change = this.changes[done++];
      const gone = change.kind === "deleted" ? change.path : change.kind === "renamed" ? String(change.from ?? "") : null;
      if (gone !== null && this.listings.has(parentOf(relative(gone)))) rows++; // may pull a row into view
      const rel = this.#apply(change);
      if (gone !== change.path && this.#drawn(rel)) rows++;
      touchedView = rel === viewed || touchedView;
      if (done % 64 === 0 && performance.now() - started > CHANGE_SLICE_MS) break;
    }
    this.changes.splice(0, done);
    if (this.changes.length) nextFrame(() => void this.#queue(() => this.#applySlice()));
    this.#patchTree();
    if (touchedView && viewed !== undefined && this.viewing?.path === viewed) {
      const gone = !this.#node(viewed);
      return gone ? this.close() : this.open(viewed);
    }
  }

  /** Draw what the changes applied since the last drawing touched: in each folder they
   * touched that is drawn, rows are kept, added, removed, or (a changed file's) drawn
   * again, matched by path; a burst costs the rows it changed, not a new tree. */
  #patchTree() {
    const { folders, rows } = this.stale;
    this.stale = { folders: new Set(), rows: new Set() };
    if (!folders.size) return;
    if (!this.listings.get(".")?.length || !this.tree.querySelector(":scope > ul")) return this.#renderTree();
    const root = /** @type {ShadowRoot | Document} */ (this.aside.getRootNode());
    const focused = /** @type {HTMLElement | null} */ (root.activeElement)?.dataset?.path;
    // Parents first: a folder its parent draws anew is drawn whole, as it is now.
    const order = [...folders].sort((a, b) => a.split("/").length - b.split("/").length || (a < b ? -1 : 1));
    for (const dir of order) this.#patchFolder(dir, rows);
    if (focused !== undefined && !this.tree.contains(root.activeElement))
      /** @type {HTMLElement | null} */ (this.tree.querySelector(`[data-path="${CSS.escape(focused)}"]`))?.focus();
  }

  /** One folder's list brought in step with its listing (see #patchTree). */
  #patchFolder(dir, rows) {
    const nodes = this.listings.get(dir);
    if (!nodes) return; // closed (its row, drawn by its parent, says so)
    let list = dir === "." ? this.tree.querySelector(":scope > ul") : null;
    if (dir !== ".") {
      const item = this.tree.querySelector(`.entry.dir[data-path="${CSS.escape(dir)}"]`)?.closest("li");
      if (!item || this.loading.has(dir)) return; // not drawn (past its folder's rows), or being listed
      list = item.querySelector(":scope > ul");
      if (!nodes.length) return list?.remove();
      if (!list) list = item.appendChild(h("ul"));
    }
    if (!list) return;
    const have = new Map(); // path → its <li>, for the rows drawn now
    /** @type {Element | null} the "more" row */
    let more = null;
    for (const item of list.children) {
      const drawn = this.rowPaths.get(item);
      if (drawn) have.set(drawn.path, item);
      else more = item;
    }
    const items = nodes.slice(0, this.#rowsOf(dir)).map((node) => {
      const item = have.get(node.path);
      const again = !item || this.rowPaths.get(item).type !== node.type || (node.type !== "dir" && rows.has(node.path));
      if (!again) {
        have.delete(node.path);
        return item;
      }
      return node.type === "dir" ? this.#folder(node) : this.#file(node);
    });
    for (const item of have.values()) item.remove();
    let cursor = list.firstElementChild;
    for (const item of items) {
      if (item === cursor) cursor = cursor.nextElementSibling;
      else list.insertBefore(item, cursor);
    }
    // The "more" row is built anew only when what it says changed (a burst patches a
    // folder at every slice; its count changes once the listing is complete).
    const said = this.#moreText(dir);
    if (said === null) more?.remove();
    else if (!more) list.append(this.#moreItem(dir, said));
    else if (more.textContent !== said.text) more.replaceWith(this.#moreItem(dir, said));
  }

  /** Whether the row of `rel` is among the rows drawn of its (open) folder. */
  #drawn(rel) {
    const dir = parentOf(rel);
    const nodes = this.listings.get(dir);
    const node = nodes && indexOf(nodes).get(rel);
    return node !== undefined && positionOf(nodes, node) < this.#rowsOf(dir);
  }

  /** One change into the listings; returns the path it changed (relative to /work).
   * @param {{path: string, kind: string, from?: string | null, entry: string, size?: number | null, runId?: string | null}} change */
  #apply({ path, kind, from, entry, size, runId }) {
    const rel = relative(path);
    if (!rel) return rel;
    this.stale.folders.add(parentOf(rel));
    this.stale.rows.add(rel);
    if (kind === "renamed") this.stale.folders.add(parentOf(relative(String(from ?? ""))));
    if (kind === "deleted" || kind === "renamed") {
      const gone = kind === "renamed" ? relative(String(from ?? "")) : rel;
      // A renamed folder's entry names the new one (a folder, so what was under it goes too).
      this.#drop(gone, kind === "renamed" || entry !== "file");
    }
    if (kind === "deleted") {
      this.fresh.delete(rel);
      return rel;
    }
    const dir = parentOf(rel);
    const nodes = this.listings.get(dir);
    if (this.tracking && runId) this.fresh.add(rel); // what a run's tools changed
    if (!nodes) return rel; // its folder is closed (or not listed): nothing drawn to change
    let node = indexOf(nodes).get(rel);
    const type = entry === "dir" ? "dir" : "file";
    if (node && node.type !== type) {
      this.#drop(rel, true);
      node = undefined;
    }
    if (!node) {
      node = { path: rel, name: rel.slice(rel.lastIndexOf("/") + 1), type, added: true };
      nodes.splice(insertAt(nodes, node), 0, node);
      indexOf(nodes).set(rel, node);
      // A folder made now (in a folder that is not itself big) opens by itself: it is
      // empty, and what is written into it next shows without a click.
      if (type === "dir" && kind === "created" && !this.folders.has(rel)) {
        const open = nodes.length <= AUTO_OPEN && !inGit(rel);
        this.folders.set(rel, open ? "open" : "closed");
        if (open) this.listings.set(rel, []);
      }
    }
    if (type === "file" && typeof size === "number" && Number.isFinite(size)) node.size = size;
    return rel;
  }

  /** Remove a path (and, for a folder, `below`: what is under it) from the listings. */
  #drop(rel, below) {
    const nodes = this.listings.get(parentOf(rel));
    const node = nodes && indexOf(nodes).get(rel);
    if (node) {
      nodes.splice(positionOf(nodes, node), 1);
      indexOf(nodes).delete(rel);
    }
    this.fresh.delete(rel);
    this.listings.delete(rel);
    this.folders.delete(rel);
    if (!below) return;
    const under = `${rel}/`;
    for (const key of [...this.listings.keys()]) if (key.startsWith(under)) this.listings.delete(key);
    for (const key of [...this.folders.keys()]) if (key.startsWith(under)) this.folders.delete(key);
    for (const key of [...this.fresh]) if (key.startsWith(under)) this.fresh.delete(key);
  }

  #node(rel) {
    const nodes = this.listings.get(parentOf(rel));
    return nodes && indexOf(nodes).get(rel);
  }

  /** A run starts: forget the marks of the last one, mark what this one changes. */
  startRun() {
    this.fresh.clear();
    this.tracking = true;
  }

  /** Read the repository's state again `ms` after the last change (one read at a time,
   * in the panel's queue of h.fs work); the badge shows only where /work is one. A burst
   * of changes only moves the due time: one timer, re-armed when it fires early. */
  #gitLater(ms) {
    this.gitDue = performance.now() + ms;
    if (this.gitTimer !== 0 || this.gitOf === null) return;
    const fire = () => {
      const left = this.gitDue - performance.now();
      if (left > 0) {
        this.gitTimer = setTimeout(fire, left);
        return;
      }
      this.gitTimer = 0;
      const git = this.gitOf;
      if (git === null) return;
      this.tail = this.tail.then(async () => {
        if (this.gitOf !== git) return;
        // Asked only where the root's listing has a .git folder: no request otherwise.
        const repo = this.listings.get(".")?.some((n) => n.name === ".git" && n.type === "dir");
        const state = repo ? await git().catch(() => null) : null;
        if (this.gitOf !== git) return;
        this.gitBadge.hidden = state === null;
        if (state === null) return;
        const name = state.branch ?? (state.head ? `detached at ${state.head}` : "no branch");
        const dirty = state.changes > 0;
        this.gitBadge.textContent = dirty ? `${name} ● ${state.changes}` : name;
        this.gitBadge.classList.toggle("dirty", dirty);
        this.gitBadge.title = `git: on ${name}, ${dirty ? `${state.changes} file${state.changes === 1 ? "" : "s"} changed (git status)` : "nothing to commit"}`;
      });
    };
    this.gitTimer = setTimeout(fire, ms);
  }

  /** List the open folders again (and the open file). A call while a refresh waits to
   * start shares it; one made while a refresh runs queues one more. */
  refresh() {
    if (!this.pending) {
      const pass = this.#queue(() => {
        if (this.pending === pass) this.pending = null;
        return this.#refreshOnce();
      });
      this.pending = pass;
    }
    return this.pending;
  }

  /** Open or close a folder. Opening lists it (and what was open inside it) now. */
  toggle(path) {
    if (this.folders.get(path) === "open") {
      this.folders.set(path, "closed");
      for (const dir of [...this.listings.keys()]) if (dir === path || dir.startsWith(`${path}/`)) this.listings.delete(dir);
      this.#renderTree(path);
      return Promise.resolve();
    }
    this.folders.set(path, "open");
    this.loading.add(path);
    this.#renderTree(path);
    return this.#queue(async () => {
      const fs = this.fs;
      if (!fs || this.folders.get(path) !== "open") {
        this.loading.delete(path); // closed again before its turn
        return;
      }
      const listings = new Map();
      try {
        await this.#listTree(fs, [path], listings, null);
      } catch (err) {
        if (this.fs === fs) this.#say(`Could not list ${path}: ${err.message}`, true);
        this.folders.set(path, "closed");
      } finally {
        this.loading.delete(path);
      }
      if (this.fs !== fs) return;
      const drawn = await this.#statDrawn(fs, listings);
      if (this.fs !== fs) return;
      for (const [dir, nodes] of listings) this.listings.set(dir, nodes);
      for (const [p, sig] of drawn) this.signatures?.set(p, sig);
      this.#renderTree(path);
    });
  }

  /** Draw the next PAGE_ROWS rows of a folder (stat'ing them first). */
  showMore(dir) {
    return this.#queue(async () => {
      const fs = this.fs;
      const nodes = this.listings.get(dir);
      if (!fs || !nodes) return;
      const from = this.#rowsOf(dir);
      this.rows.set(dir, from + PAGE_ROWS);
      const drawn = await this.#statDrawn(fs, new Map([[dir, nodes]]), from);
      if (this.fs !== fs) return;
      for (const [p, sig] of drawn) this.signatures?.set(p, sig);
      this.focusNext = nodes[from]?.path ?? null;
      // The rows drawn stay; the new ones take the button's place.
      const button = this.tree.querySelector(`.more[data-more="${CSS.escape(dir)}"]`)?.closest("li");
      if (!button) return this.#renderTree(dir);
      button.replaceWith(...this.#items(dir, from));
      this.#markCurrent();
      if (this.focusNext) this.tree.querySelector(`[data-path="${CSS.escape(this.focusNext)}"]`)?.focus();
      this.focusNext = null;
    });
  }

  /** Delete a file, or a folder and everything in it, then show the tree as it is. */
  async remove(path) {
    if (!this.fs || this.deleting) return;
    this.deleting = path;
    this.confirming = null;
    this.#renderTree();
    const name = path.split("/").pop();
    try {
      await this.fs.rm(path, { recursive: true });
      this.#say(`Deleted ${name}`);
      const under = (p) => p === path || p.startsWith(`${path}/`);
      for (const p of [...this.fresh]) if (under(p)) this.fresh.delete(p);
      for (const map of [this.folders, this.listings, this.rows]) for (const p of [...map.keys()]) if (under(p)) map.delete(p);
      if (this.viewing && under(this.viewing.path)) this.close();
      const parent = path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : ".";
      const siblings = this.listings.get(parent);
      if (siblings)
        this.listings.set(
          parent,
          siblings.filter((n) => n.path !== path),
        );
    } catch (err) {
      this.#say(`Could not delete ${name}: ${err.message}`, true);
    } finally {
      this.deleting = null;
    }
    this.#renderTree(); // as it is now, before the listing again
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

  /** Run the panel's h.fs work one task at a time, so a listing never overtakes another. */
  #queue(task) {
    const run = this.tail.then(task);
    this.tail = run.catch(() => {});
    return run;
  }

  async #refreshOnce() {
    const fs = this.fs;
    if (!fs) return;
    const listings = new Map();
    try {
      await this.#listTree(fs, ["."], listings, this.listings);
    } catch (err) {
      if (this.fs === fs) this.#say(`Could not list /work: ${err.message}`, true);
      return;
    }
    if (this.fs !== fs) return;
    const viewing = this.viewing?.path;
    const signatures = await this.#statDrawn(fs, listings, 0, viewing);
    if (this.fs !== fs) return;
    if (this.signatures && this.tracking) {
      for (const nodes of listings.values()) {
        for (const node of nodes) {
          const sig = signatures.get(node.path); // files drawn only
          if (sig === undefined) continue;
          const before = this.signatures.get(node.path);
          if (node.added || (before !== undefined && before !== sig)) this.fresh.add(node.path);
        }
      }
    }
    const viewed = viewing !== undefined && this.signatures?.get(viewing) !== signatures.get(viewing);
    this.signatures = signatures;
    this.listings = listings;
    this.#renderTree();
    if (viewed && this.viewing?.path === viewing) {
      if (signatures.has(viewing)) await this.open(viewing);
      else this.close();
    }
  }

  /**
   * List the folders `roots` and, breadth first, the open folders inside them into
   * `listings`. With `before` (the last refresh's listings) a folder nobody chose yet
   * opens by itself while the folders opened so hold AUTO_OPEN entries in all, and each
   * node says whether it was `added` since (its folder was listed and lacked it, or its
   * folder is new); without, such a folder stays closed (the user opened its parent).
   * A root that cannot be listed throws; a folder inside that went meanwhile is left out.
   */
  async #listTree(fs, roots, listings, before) {
    const added = new Set(); // folders that are new since the last refresh
    let auto = 0; // entries of the root and the folders that opened by themselves
    const queue = roots.map((path) => ({ path, chosen: true }));
    while (queue.length) {
      const { path, chosen } = /** @type {{path: string, chosen: boolean}} */ (queue.shift());
      if (!chosen && (auto >= AUTO_OPEN || inGit(path))) {
        this.folders.set(path, "closed");
        continue;
      }
      let entries;
      try {
        entries = await fs.readdir(path);
      } catch (err) {
        if (roots.includes(path)) throw err;
        continue;
      }
      const nodes = toNodes(path, entries);
      if (!chosen) {
        auto += nodes.length;
        const fits = auto <= AUTO_OPEN;
        this.folders.set(path, fits ? "open" : "closed");
        if (!fits) continue; // too big to open by itself: shown closed, listed when opened
      } else if (path === ".") auto += nodes.length;
      listings.set(path, nodes);
      const known = before?.get(path);
      const names = known && new Set(known.map((n) => n.name));
      for (const node of nodes) {
        node.added = Boolean(before) && (added.has(path) || (names !== undefined && !names.has(node.name)));
        if (node.type !== "dir") continue;
        if (node.added) added.add(node.path);
        const state = this.folders.get(node.path);
        if (state === "open") queue.push({ path: node.path, chosen: true });
        else if (state === undefined && before) queue.push({ path: node.path, chosen: false });
        else if (state === undefined) this.folders.set(node.path, "closed");
      }
    }
  }

  /** Stat the files drawn in `listings` (from row `from` of each folder on), and the open
   * file `also`; their sizes go on the nodes.
   * @param {string} [also]
   * @returns {Promise<Map<string, string>>} path → "size:mtime" */
  async #statDrawn(fs, listings, from = 0, also = undefined) {
    const files = [];
    for (const [dir, nodes] of listings) files.push(...nodes.slice(from, this.#rowsOf(dir)).filter((n) => n.type !== "dir"));
    const extra = also !== undefined && !files.some((n) => n.path === also) ? [{ path: also }] : [];
    const signatures = new Map();
    await Promise.all(
      [...files, ...extra].map(async (node) => {
        const stat = await fs.stat(node.path).catch(() => null);
        if (!stat) return;
        node.size = stat.size;
        signatures.set(node.path, `${stat.size}:${stat.mtime}`);
      }),
    );
    return signatures;
  }

  #rowsOf(dir) {
    return this.rows.get(dir) ?? PAGE_ROWS;
  }

  /** Draw the tree again, or (`folder`) only that folder and what is inside it: opening
   * or growing one big folder does not rebuild the rows of the others. */
  /** @param {string | null} [folder] */
  #renderTree(folder = null) {
    const root = /** @type {ShadowRoot | Document} */ (this.aside.getRootNode());
    const focused = /** @type {HTMLElement | null} */ (root.activeElement)?.dataset;
    const top = this.listings.get(".");
    const item = folder && folder !== "." ? this.tree.querySelector(`.entry.dir[data-path="${CSS.escape(folder)}"]`)?.closest("li") : null;
    const parent = folder?.includes("/") ? folder.slice(0, folder.lastIndexOf("/")) : ".";
    const node = item && this.listings.get(parent)?.find((n) => n.path === folder);
    if (item && node) item.replaceWith(this.#folder(node));
    else if (top?.length) this.tree.replaceChildren(this.#list("."));
    else {
      const empty = this.fs ? "No files yet. Upload some, or ask the agent to write one." : "Files appear here once the agent is ready.";
      this.tree.replaceChildren(h("div", { class: "files-empty" }, empty));
      return;
    }
    this.#markCurrent();
    const next = this.focusNext;
    this.focusNext = null;
    const at = (attr, value) => this.tree.querySelector(`[${attr}="${CSS.escape(value)}"]`);
    if (this.confirming) this.tree.querySelector(".confirm .yes")?.focus();
    else if (next) at("data-path", next)?.focus();
    else if (focused?.path) at("data-path", focused.path)?.focus();
    else if (focused?.delete) at("data-delete", focused.delete)?.focus();
    else if (focused?.more) (at("data-more", focused.more) ?? at("data-path", focused.more))?.focus();
  }

  /** The list of one open folder: its first rows, then "show more" when it holds more. */
  #list(dir) {
    return h("ul", {}, ...this.#items(dir));
  }

  /** The items of a folder's list from row `from` on: rows, then "show more" if it holds more. */
  #items(dir, from = 0) {
    const nodes = this.listings.get(dir) ?? [];
    const items = nodes.slice(from, this.#rowsOf(dir)).map((node) => (node.type === "dir" ? this.#folder(node) : this.#file(node)));
    const more = this.#moreItem(dir);
    if (more) items.push(more);
    return items;
  }

  /** What the "show more" row of a folder says, if it holds more than it draws (else null). */
  #moreText(dir) {
    const rest = (this.listings.get(dir)?.length ?? 0) - this.#rowsOf(dir);
    if (rest <= 0) return null;
    const next = Math.min(rest, PAGE_ROWS);
    return { next, rest, text: `Show ${next} more (${COUNT.format(rest)} not shown)` };
  }

  /** The "show more" item of a folder that holds more than it draws (else null). */
  #moreItem(dir, said = this.#moreText(dir)) {
    if (said === null) return null;
    const where = dir === "." ? "/work" : visibleText(dir);
    const more = h(
      "button",
      {
        type: "button",
        class: "more",
        "data-more": dir,
        "aria-label": `Show ${said.next} more entries of ${where} (${said.rest} not shown)`,
      },
      said.text,
    );
    more.addEventListener("click", () => void this.showMore(dir));
    return h("li", {}, more);
  }

  #folder(node) {
    const open = this.folders.get(node.path) === "open";
    const button = h(
      "button",
      { type: "button", class: "entry dir", "data-path": node.path, "aria-expanded": String(open), title: visibleText(node.path) },
      icon("chevron"),
      icon("folder"),
      h("span", { class: "name" }, ...visibleName(node.name)),
    );
    button.addEventListener("click", () => void this.toggle(node.path));
    let inside = null;
    if (open && this.loading.has(node.path)) inside = h("div", { class: "files-loading", role: "status" }, "Listing…");
    else if (open && this.listings.get(node.path)?.length) inside = this.#list(node.path);
    const item = h("li", {}, this.#row(node, button), inside);
    this.rowPaths.set(item, node);
    return item;
  }

  #file(node) {
    const fresh = this.fresh.has(node.path);
    const path = visibleText(node.path);
    const button = h(
      "button",
      {
        type: "button",
        class: `entry file${fresh ? " fresh" : ""}`,
        "data-path": node.path,
        "aria-current": String(node.path === this.viewing?.path),
        title: fresh ? `${path} (changed)` : path,
      },
      icon("file"),
      h("span", { class: "name" }, ...visibleName(node.name)),
      h("span", { class: "size" }, node.size === undefined ? "" : formatBytes(node.size)),
    );
    button.addEventListener("click", () => void this.open(node.path));
    const item = h("li", { class: "file-row" }, this.#row(node, button));
    this.rowPaths.set(item, node);
    return item;
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
        this.#renderTree();
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
      this.#renderTree();
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
    if (!this.viewing) return;
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
    saveAs(bytes, visibleText(path.split("/").pop())); // saved without hidden characters
  }

  /** The status line; the names in it are the model's, so their hidden characters show. */
  #say(text, error = false) {
    this.foot.textContent = visibleText(text);
    this.foot.classList.toggle("error", error);
  }
}

/** @typedef {{path: string, name: string, type: string, size?: number, added?: boolean}} TreeNode */

/** Where `node` goes in a folder's nodes: folders first, then by name, as listed (a
 * binary search: the first node it sorts before). */
function insertAt(nodes, node) {
  const before = (a, b) => ((a.type === "dir") !== (b.type === "dir") ? a.type === "dir" : a.name < b.name);
  let low = 0;
  let high = nodes.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (before(node, nodes[mid])) high = mid;
    else low = mid + 1;
  }
  return low;
}

/** Where `node` is in `nodes`: found by the binary search when the folder is sorted as
 * the listing sorts it, else by a scan (a name JavaScript orders apart from Python). */
function positionOf(nodes, node) {
  const at = insertAt(nodes, node) - 1;
  return nodes[at] === node ? at : nodes.indexOf(node);
}

/** path → node of one folder's nodes, made when first asked and kept in step by the
 * panel's own splices (a listing that is replaced gets a new index). */
const indexes = new WeakMap();
/** @param {TreeNode[]} nodes @returns {Map<string, TreeNode>} */
function indexOf(nodes) {
  let index = indexes.get(nodes);
  if (!index) {
    index = new Map(nodes.map((n) => [n.path, n]));
    indexes.set(nodes, index);
  }
  return index;
}

/** A path under /work as the tree names it ("" for /work itself). */
function relative(path) {
  return path.replace(/^\/work\/?/, "");
}

/** The folder of a path relative to /work ("." for the root). */
function parentOf(rel) {
  return rel.includes("/") ? rel.slice(0, rel.lastIndexOf("/")) : ".";
}

/** Call `fn` at the next frame; a page whose frames are paused (a hidden tab) still
 * gets it, from a timer. */
function nextFrame(fn) {
  let called = false;
  const once = () => {
    if (called) return;
    called = true;
    fn();
  };
  requestAnimationFrame(once);
  setTimeout(once, 100);
}

/** One folder's entries as nodes: folders first, then the rest, each by name (as readdir sorts).
 * @param {string} dir @param {{name: string, type: string}[]} entries @returns {TreeNode[]} */
function toNodes(dir, entries) {
  const nodes = entries.map((entry) => ({ path: dir === "." ? entry.name : `${dir}/${entry.name}`, name: entry.name, type: entry.type }));
  return nodes.sort((a, b) => ((a.type === "dir") === (b.type === "dir") ? 0 : a.type === "dir" ? -1 : 1));
}

function isBinary(bytes) {
  return bytes.subarray(0, 8000).includes(0);
}
