// Plan mode in the widget: the composer's "Plan" toggle sends the next prompt as a plan
// run (h.prompt(text, {mode: "plan"}): read-only tools, nothing in /work changes), and
// under a plan run's answer the plan is shown for review: the user edits it in place and
// "Run this plan" carries it out (h.prompt(text, {plan})). Nothing runs until then.

import { h } from "./widget-dom.mjs";

/** The composer's toggle: pressed, the next prompt is a plan run. @returns {HTMLButtonElement} */
export function planToggle() {
  const button = /** @type {HTMLButtonElement} */ (
    h(
      "button",
      {
        type: "button",
        class: "plan-toggle",
        part: "plan-toggle",
        "aria-pressed": "false",
        "aria-label": "Plan first",
        title: "Plan first: the agent only reads, then proposes a plan you can edit and run",
      },
      "Plan",
    )
  );
  button.addEventListener("click", () => {
    button.setAttribute("aria-pressed", String(button.getAttribute("aria-pressed") !== "true"));
  });
  return button;
}

/** Whether the toggle is pressed. @param {HTMLElement} toggle */
export const planning = (toggle) => toggle.getAttribute("aria-pressed") === "true";

/**
 * The review of a plan run's plan: an editable text and "Run this plan" (Ctrl+Enter in
 * the text). `run` is given the plan as edited; the control is spent once it is used.
 * @param {string} text @param {(plan: string) => boolean} run false: it could not start now
 * @returns {HTMLElement}
 */
export function planControl(text, run) {
  const area = /** @type {HTMLTextAreaElement} */ (
    h("textarea", { class: "plan-text", "aria-label": "The plan: edit it before you run it", spellcheck: "true" })
  );
  area.value = text;
  area.rows = Math.min(14, Math.max(3, text.split("\n").length + 1));
  const go = /** @type {HTMLButtonElement} */ (h("button", { type: "button", class: "approval-button primary" }, "Run this plan"));
  const status = h("span", { class: "meta", role: "status" });
  const node = h(
    "div",
    { class: "plan-box", part: "plan", role: "group", "aria-label": "Plan for review" },
    h("div", { class: "notice-title" }, "Plan"),
    h("p", { class: "meta" }, "Nothing has changed yet. Edit the plan if you like, then run it."),
    area,
    h("div", { class: "actions" }, go, status),
  );
  const start = () => {
    const plan = area.value.trim();
    if (!plan || go.disabled) return;
    if (!run(plan)) {
      status.textContent = "Wait for the current run to end.";
      return;
    }
    go.disabled = true;
    area.readOnly = true;
    status.textContent = "Running the plan below.";
  };
  go.addEventListener("click", start);
  area.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      start();
    }
  });
  return node;
}
