// "Undo this run" under a finished run that changed files (and "Undo this subagent" in
// each subagent's card, for what it changed alone): the button shows what the run
// changed first (h.diff: each path, its kind, and the diff of a text file), then Revert
// takes it back (h.revert, all or nothing). A conflict (a later run, the page or the
// user changed those paths since) is said in words, with the choice to take the later
// runs back too (cascade); nothing is reverted until the user says so.

import { diffView } from "./widget-approval.mjs";
import { h, visibleName } from "./widget-dom.mjs";

const KIND = { created: "added", deleted: "deleted", modified: "changed", mode_changed: "mode changed" };

/**
 * @param {{diff: () => Promise<any[]>, revert: (opts?: {cascade?: boolean}) => Promise<any>}} run
 * @param {string} [what] what is undone, in words: "this run" or "this subagent"
 * @returns {HTMLElement}
 */
export function undoControl(run, what = "this run") {
  const open = h("button", { type: "button", class: "undo-open" }, `Undo ${what}`);
  const panel = h("div", { class: "undo", part: "undo", hidden: "" });
  const node = h("div", { class: "undo-box" }, open, panel);
  open.addEventListener("click", () => void show(run, what, open, panel));
  return node;
}

async function show(run, what, open, panel) {
  open.disabled = true;
  panel.hidden = false;
  panel.replaceChildren(h("div", { class: "undo-status", role: "status" }, `Looking at what ${what} changed…`));
  let changes;
  try {
    changes = await run.diff();
  } catch (error) {
    return finish(panel, open, `${what[0].toUpperCase()}${what.slice(1)} cannot be undone: ${error.message}`, true);
  }
  const list = h("ul", { class: "undo-list", "aria-label": `What ${what} changed` });
  for (const change of changes) {
    const name = change.path.replace(/^\/work\//, "");
    const item = h(
      "li",
      { "data-kind": change.kind },
      h("span", { class: "undo-kind" }, KIND[change.kind] ?? change.kind),
      " ",
      h("span", { class: "undo-path" }, ...visibleName(name)),
    );
    if (change.diff) item.append(diffView(change.diff));
    list.append(item);
  }
  const revert = h("button", { type: "button", class: "approval-button primary" }, "Revert");
  const cancel = h("button", { type: "button", class: "approval-button secondary" }, "Cancel");
  const status = h("div", { class: "undo-status", role: "status" });
  const actions = h("div", { class: "approval-actions" }, revert, cancel);
  panel.replaceChildren(
    h(
      "div",
      { class: "approval-title" },
      `Undo ${what}: ${changes.length} ${changes.length === 1 ? "path" : "paths"} go back to how they were`,
    ),
    list,
    actions,
    status,
  );
  revert.focus({ preventScroll: true });
  cancel.addEventListener("click", () => {
    panel.hidden = true;
    open.disabled = false;
    open.focus({ preventScroll: true });
  });
  const attempt = async (opts) => {
    for (const b of actions.querySelectorAll("button")) b.disabled = true;
    status.textContent = "Reverting…";
    try {
      const result = await run.revert(opts);
      const others = result.reverted.length - 1;
      finish(
        panel,
        open,
        `Reverted: ${result.changes.length} ${result.changes.length === 1 ? "path" : "paths"} restored${others > 0 ? ` (and ${others} later ${others === 1 ? "run" : "runs"})` : ""}.`,
      );
    } catch (error) {
      if (error.code === "ECONFLICT" && !opts?.cascade) {
        status.textContent = `Not reverted: ${error.message.replace(/^ECONFLICT: /, "")}`;
        const later = h("button", { type: "button", class: "approval-button danger" }, "Revert later runs too");
        later.addEventListener("click", () => void attempt({ cascade: true }));
        actions.replaceChildren(later, cancel);
        cancel.disabled = false;
        later.focus({ preventScroll: true });
      } else {
        finish(panel, open, `Not reverted: ${error.message}`, true);
      }
    }
  };
  revert.addEventListener("click", () => void attempt());
}

function finish(panel, open, text, failed = false) {
  panel.dataset.state = failed ? "failed" : "reverted";
  panel.replaceChildren(h("div", { class: "undo-status", role: "status" }, text));
  open.hidden = !failed;
  open.disabled = false;
}
