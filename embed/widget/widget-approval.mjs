// The widget's answer to a permission rule's "ask": a panel inline in the run, under
// the tool call's card, with what the call would do and three buttons after it: Allow
// once, Always, Deny. What it would do is shown whole, never cut: a command in a
// wrapped, scrollable box (a long line's tail, `…; rm -f …`, is there to scroll to),
// a path in the question, the diff of write and edit; every control, bidi or
// zero-width character written as its escape (⟨U+202E⟩). Keyboard: the panel takes
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
let panels = 0; // a call may be asked more than once (each command as it runs): ids stay unique

export function approvalPanel(request, signal) {
  const id = `approval-${request.callId}-${++panels}`;
  const title = h("div", { class: "approval-title", id }, ...visibleName(question(request)));
  const rule = h("div", { class: "approval-rule" }, ...visibleName(`Rule: ${request.rule}`));
  const buttons = [button("once", "Allow once", "primary"), button("always", "Always", "secondary"), button("deny", "Deny", "danger")];
  const status = h("div", { class: "approval-status", role: "status" });
  const node = h(
    "div",
    { class: "approval", role: "group", "aria-labelledby": title.id, "data-state": "asking", part: "approval" },
    title,
    rule,
    shownInFull(request) ? subjectView(request) : null,
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

const SHORT_SUBJECT = 120; // characters of a subject that fit in the question itself

/** Whether the subject is a command line (the shell's subject is its `command`). */
const isCommand = ({ subject, input }) => typeof subject === "string" && input?.command === subject;

/** Whether the subject is shown in its own box: a command, or a subject too long for
 * the question. */
function shownInFull(request) {
  return isCommand(request) || (typeof request.subject === "string" && request.subject.length > SHORT_SUBJECT);
}

/** "Allow write on docs/a.md?", "Allow bash to run this command?", … (the subject
 * whole: a long one is in the box below, never cut here) */
function question(request) {
  const { tool, subject } = request;
  if (subject === null || subject === undefined) return `Allow ${tool}?`;
  if (isCommand(request)) return `Allow ${tool} to run this command?`;
  if (shownInFull(request)) return `Allow ${tool} on the path below?`;
  return subject.includes(" ") ? `Allow ${tool}: ${subject}?` : `Allow ${tool} on ${subject}?`;
}

/** The whole subject in a box that wraps and scrolls: a command's lines as lines, and
 * every other invisible character (a carriage return, a tab, an escape, bidi, zero
 * width; in a path a newline too) shown as its escape. Focusable, so the keyboard can
 * scroll it. */
function subjectView(request) {
  const subject = /** @type {string} */ (request.subject);
  const command = isCommand(request);
  const nodes = [];
  for (const [i, line] of (command ? subject.split("\n") : [subject]).entries()) {
    if (i) nodes.push(document.createTextNode("\n"));
    nodes.push(...visibleName(line));
  }
  return h(
    "pre",
    {
      class: "approval-command",
      tabindex: "0",
      role: "region",
      "aria-label": `The ${command ? "command" : "path"}, in full (${subject.length.toLocaleString()} characters)`,
    },
    ...nodes,
  );
}

/** A unified diff, one line each, marked added or removed (text, never HTML). */
export function diffView(diff) {
  const lines = diff.split("\n");
  const hunk = { old: 0, new: 0 };
  const shown = lines.slice(0, DIFF_LINES).map((line) => h("span", { class: `dl ${lineKind(line, hunk)}` }, ...visibleName(line)));
  if (lines.length > DIFF_LINES) shown.push(h("span", { class: "dl more" }, `… ${lines.length - DIFF_LINES} more lines`));
  return h("pre", { class: "approval-diff", "aria-label": "What the call would change" }, ...shown);
}

/** What one diff line is. Inside a hunk, what its header's counts say (`hunk`: the old
 * and new lines still to come), so a removed line "-- x" (shown "--- x") is a removal,
 * not a file name; outside, by its first characters. */
function lineKind(line, hunk) {
  if (hunk.old > 0 && line.startsWith("-")) {
    hunk.old--;
    return "del";
  }
  if (hunk.new > 0 && line.startsWith("+")) {
    hunk.new--;
    return "add";
  }
  if ((hunk.old > 0 || hunk.new > 0) && line.startsWith(" ")) {
    hunk.old--;
    hunk.new--;
    return "ctx";
  }
  const header = /^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@/.exec(line);
  if (header) {
    hunk.old = Number(header[1] ?? 1);
    hunk.new = Number(header[2] ?? 1);
    return "hunk";
  }
  hunk.old = hunk.new = 0; // not a hunk's line: the hunk is over
  if (line.startsWith("+") && !line.startsWith("+++ ")) return "add";
  if (line.startsWith("-") && !line.startsWith("--- ")) return "del";
  return "ctx";
}
