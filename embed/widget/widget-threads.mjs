// The widget's thread list: the conversations kept with the workspace (h.threads), to
// start a new one, go back to an older one, or delete one. It only shows and asks; the
// widget does the switching (it redraws the conversation from the thread's transcript).

import { h, icon } from "./widget-dom.mjs";

export class ThreadList {
  /**
   * @param {HTMLElement} panel the popover element (hidden while closed)
   * @param {HTMLButtonElement} toggle the header button that opens it
   * @param {{onNew: () => Promise<void>, onSwitch: (id: string) => Promise<void>, onDelete: (id: string) => Promise<void>}} actions
   */
  constructor(panel, toggle, actions) {
    this.panel = panel;
    this.toggle = toggle;
    this.actions = actions;
    this.threads = null; // the harness's h.threads, while attached
    this.running = false; // a run is going: the current thread cannot change
    this.busy = false; // one of our own requests is going
    this.currentIsEmpty = false;
    this.list = h("ul", { class: "thread-items", "aria-label": "Threads" });
    const add = h("button", { type: "button", class: "ghost new-thread" }, icon("plus"), "New thread");
    add.addEventListener(
      "click",
      () =>
        void this.#act(async () => {
          if (!this.currentIsEmpty) await this.actions.onNew(); // an empty one is new enough
          this.setOpen(false);
        }),
    );
    this.add = add;
    this.foot = h("div", { class: "threads-foot", role: "status" });
    panel.append(h("div", { class: "threads-head" }, h("h2", {}, "Threads"), add), this.list, this.foot);
    toggle.addEventListener("click", () => this.setOpen(panel.hidden));
    panel.addEventListener("keydown", (e) => {
      if (e.key === "Escape") {
        this.setOpen(false);
        toggle.focus();
      }
    });
  }

  attach(threads) {
    this.threads = threads;
    this.toggle.disabled = false;
    return this.refresh();
  }

  detach() {
    this.threads = null;
    this.toggle.disabled = true;
    this.setOpen(false);
    this.list.replaceChildren();
  }

  setOpen(open) {
    this.panel.hidden = !open;
    this.toggle.setAttribute("aria-expanded", String(open));
    if (open)
      void this.refresh().then(() => /** @type {HTMLElement | null} */ (this.panel.querySelector("[aria-current=true], button"))?.focus());
  }

  /** While a run goes on the current thread cannot change. */
  setRunning(running) {
    this.running = running;
    this.#applyDisabled();
  }

  #applyDisabled() {
    const disabled = this.running || this.busy;
    for (const button of this.panel.querySelectorAll("button")) button.disabled = disabled;
  }

  async refresh() {
    const threads = this.threads;
    if (!threads) return;
    let listing;
    try {
      listing = await threads.list();
    } catch (error) {
      this.foot.textContent = error.message;
      return;
    }
    if (threads !== this.threads) return;
    this.currentIsEmpty = listing.threads.some((t) => t.id === listing.current && t.messages === 0);
    this.list.replaceChildren(...listing.threads.map((t) => this.#item(t, t.id === listing.current)));
    this.#applyDisabled();
  }

  #item(thread, current) {
    const title = thread.title || (thread.messages ? "Untitled" : "Empty thread");
    const open = h(
      "button",
      { type: "button", class: "thread", "aria-current": String(current), "data-id": thread.id, title },
      h("span", { class: "thread-title" }, title),
      h("span", { class: "thread-meta" }, `${when(thread.updated)} · ${thread.messages} messages`),
    );
    open.addEventListener(
      "click",
      () =>
        void this.#act(async () => {
          if (!current) await this.actions.onSwitch(thread.id);
          this.setOpen(false);
        }),
    );
    // Deleting takes two clicks: the first one asks.
    const remove = h(
      "button",
      { type: "button", class: "icon-btn delete", "aria-label": `Delete thread ${title}`, title: "Delete" },
      icon("close"),
    );
    remove.addEventListener("click", () => {
      if (remove.dataset.confirm !== "yes") {
        remove.dataset.confirm = "yes";
        remove.replaceChildren("Delete?");
        remove.setAttribute("aria-label", "Click again to delete the thread");
        return;
      }
      void this.#act(() => this.actions.onDelete(thread.id));
    });
    const rename = h(
      "button",
      { type: "button", class: "icon-btn rename", "aria-label": `Rename thread ${title}`, title: "Rename" },
      icon("pencil"),
    );
    const item = h("li", {}, open, rename, remove);
    rename.addEventListener("click", () => this.#rename(item, thread));
    return item;
  }

  /** The title becomes a text field: Enter saves it, Escape or leaving it cancels. */
  #rename(item, thread) {
    if (this.running || this.busy) return;
    const input = h("input", { type: "text", class: "thread-rename", "aria-label": "Thread title", maxlength: "200", value: thread.title });
    const form = h("form", { class: "thread-rename-form" }, input);
    item.replaceChildren(form);
    input.focus();
    input.select();
    let done = false;
    const finish = (save) => {
      if (done) return;
      done = true;
      if (save && input.value.trim() !== thread.title) void this.#act(() => this.threads.rename(thread.id, input.value));
      else void this.refresh();
    };
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      finish(true);
    });
    input.addEventListener("keydown", (e) => {
      if (e.key !== "Escape") return;
      e.stopPropagation(); // closes the field, not the panel
      finish(false);
    });
    input.addEventListener("blur", () => finish(false));
  }

  async #act(action) {
    if (this.running || this.busy) return;
    this.foot.textContent = "";
    this.busy = true;
    this.#applyDisabled();
    try {
      await action();
    } catch (error) {
      this.foot.textContent = error.message;
    } finally {
      this.busy = false;
      this.#applyDisabled();
      await this.refresh();
    }
  }
}

/** "just now", "5 min ago", "3 h ago", or the date. */
function when(seconds) {
  const ago = Date.now() / 1000 - seconds;
  if (ago < 60) return "just now";
  if (ago < 3600) return `${Math.floor(ago / 60)} min ago`;
  if (ago < 86400) return `${Math.floor(ago / 3600)} h ago`;
  return new Date(seconds * 1000).toLocaleDateString();
}
