// The widget's answer to a permission rule's "ask": a panel inline in the run, under
// the tool call's card, with what the call would do (its arguments, and for write and
// edit the diff) and three buttons: Allow once, Always, Deny. Keyboard: the panel takes
// focus on its first button, Tab moves between them, Enter or Space presses, Escape
// denies. It settles once: by a button, or when the harness gives up on the answer
// (the signal: a timeout, a cancelled run, close()).

import { h, visibleName } from "./widget-dom.mjs";

const DIFF_LINES = 400; // lines of the diff drawn; the rest is summarised

const SETTLED = {
  once: "Allowed once",
  always: "Allowed for the rest of this session",
  deny: "Denied",
};

/**
 * @param {import("../page/pyharness.d.ts").ApprovalRequest} request
 * @param {AbortSignal} signal
 * @returns {{node: HTMLElement, answer: Promise<"once" | "always" | "deny">}}
 */
export function approvalPanel(request, signal) {
  const title = h("div", { class: "approval-title", id: `approval-${request.callId}` }, ...visibleName(question(request)));
  const rule = h("div", { class: "approval-rule" }, ...visibleName(`Rule: ${request.rule}`));
  const buttons = [button("once", "Allow once", "primary"), button("always", "Always", "secondary"), button("deny", "Deny", "danger")];
  const status = h("div", { class: "approval-status", role: "status" });
  const node = h(
    "div",
    { class: "approval", role: "group", "aria-labelledby": title.id, "data-state": "asking", part: "approval" },
    title,
    rule,
    request.diff ? diffView(request.diff) : null,
    h("div", { class: "approval-actions" }, ...buttons),
    status,
  );
  let settle;
  const answer = new Promise((resolve) => (settle = resolve));
  const finish = (decision, text) => {
    if (node.dataset.state !== "asking") return;
    node.dataset.state = decision;
    for (const b of buttons) b.disabled = true;
    status.textContent = text;
    settle(decision);
  };
  for (const b of buttons) b.addEventListener("click", () => finish(b.value, SETTLED[b.value]));
  node.addEventListener("keydown", (e) => {
    if (e.key === "Escape") {
      e.stopPropagation();
      finish("deny", SETTLED.deny);
    }
  });
  signal.addEventListener("abort", () => finish("deny", "No longer waiting for an answer (timed out or cancelled)"), { once: true });
  queueMicrotask(() => buttons[0].focus({ preventScroll: true }));
  return { node, answer };
}

function button(value, label, kind) {
  return h("button", { type: "button", class: `approval-button ${kind}`, value }, label);
}

/** "Allow write to docs/a.md?", "Allow bash: git push?", … */
function question({ tool, subject }) {
  if (subject === null || subject === undefined) return `Allow ${tool}?`;
  const shown = subject.length > 200 ? `${subject.slice(0, 200)}…` : subject;
  return tool === "bash" || subject.includes(" ") ? `Allow ${tool}: ${shown}?` : `Allow ${tool} on ${shown}?`;
}

/** A unified diff, one line each, marked added or removed (text, never HTML). */
export function diffView(diff) {
  const lines = diff.split("\n");
  const shown = lines.slice(0, DIFF_LINES).map((line) => {
    const kind =
      line.startsWith("+") && !line.startsWith("+++")
        ? "add"
        : line.startsWith("-") && !line.startsWith("---")
          ? "del"
          : line.startsWith("@@")
            ? "hunk"
            : "ctx";
    return h("span", { class: `dl ${kind}` }, ...visibleName(line));
  });
  if (lines.length > DIFF_LINES) shown.push(h("span", { class: "dl more" }, `… ${lines.length - DIFF_LINES} more lines`));
  return h("pre", { class: "approval-diff", "aria-label": "What the call would change" }, ...shown);
}
