// The widget's conversation: user messages, the assistant's streamed Markdown, reasoning,
// tool calls as collapsible cards, and notices (errors with what to do). It renders
// run events; it never talks to the harness itself.

import { approvalPanel } from "./widget-approval.mjs";
import { MarkdownStream } from "./markdown.mjs";
import { h, icon, stickToBottom, visibleName } from "./widget-dom.mjs";

const OUTPUT_SHOWN = 6000; // characters of a tool's output shown before "Show all"

/** What to tell the user for an `error` event, by its code. */
const RUN_ERRORS = {
  model_error: ["The model request failed", "Check the model settings (API, base URL, model name, key) and send again."],
  script_exhausted: [
    "The scripted model has no turns left",
    "A scripted model replays a fixed conversation. Configure a real model to go on.",
  ],
  busy: ["Another run is still going", "Wait for it to finish, or cancel it."],
  internal: ["pyharness hit an internal error", "This is a bug; please report it with the message below."],
};

export class ChatLog {
  /** @param {HTMLElement} box the scrolling role="log" element */
  constructor(box) {
    this.box = box;
    /** @type {string[]} blob: URLs of the images drawn */
    this.urls = [];
  }

  clear() {
    this.box.replaceChildren();
    for (const url of this.urls.splice(0)) URL.revokeObjectURL(url);
  }

  /** The welcome shown before the first message; `onPick` sends a suggestion. */
  showEmpty({ heading, tools, suggestions, onPick, disabled }) {
    this.box.querySelector(".empty")?.remove();
    const box = h(
      "div",
      { class: "empty", part: "empty" },
      h("div", { class: "mark" }, icon("mark")),
      h("h2", {}, heading),
      h("p", {}, "A Python coding agent running in this page. Its files live in your browser."),
    );
    if (tools.length)
      box.append(
        h("div", { class: "chips", "aria-label": "Tools the agent can use" }, ...tools.map((t) => h("span", { class: "chip" }, t))),
      );
    if (suggestions.length) {
      box.append(
        h(
          "div",
          { class: "suggestions" },
          ...suggestions.map((text) => {
            const button = h("button", { type: "button", class: "suggestion", disabled }, text);
            button.addEventListener("click", () => onPick(text));
            return button;
          }),
        ),
      );
    }
    this.box.prepend(box);
  }

  hideEmpty() {
    this.box.querySelector(".empty")?.remove();
  }

  setSuggestionsDisabled(disabled) {
    for (const button of this.box.querySelectorAll(".suggestion")) /** @type {HTMLButtonElement} */ (button).disabled = disabled;
  }

  /** An error or information box, optionally with one action button. */
  notice({ kind = "info", title, message, detail, action, onAction }) {
    const box = h(
      "div",
      { class: `notice ${kind}`, role: kind === "error" ? "alert" : "status", part: "notice" },
      h("div", { class: "notice-title" }, title),
      message ? h("p", {}, message) : null,
      detail ? h("p", { class: "detail" }, detail) : null,
    );
    if (action) {
      const button = h("button", { type: "button", class: "ghost" }, action);
      button.addEventListener("click", onAction);
      box.append(h("div", { class: "actions" }, button));
    }
    stickToBottom(this.box, () => this.box.append(box));
    return box;
  }

  /** The user's prompt, with the images it carried ({url: a blob: URL the page made from
   * bytes it holds, name}; the log revokes them when it is cleared). */
  addUser(text, images = []) {
    this.hideEmpty();
    this.urls.push(...images.flatMap((i) => (i.url ? [i.url] : [])));
    const pictures = images.length ? h("div", { class: "user-images" }, ...images.map(userImage)) : null;
    stickToBottom(this.box, () =>
      this.box.append(h("div", { class: "msg user", part: "user-message" }, h("div", { class: "bubble" }, pictures, text))),
    );
    this.box.scrollTop = this.box.scrollHeight;
  }

  /** Start the assistant's answer to the last prompt; feed it the run's events. */
  startTurn() {
    return new AssistantTurn(this.box);
  }
}

/** An image of the user's message, or, for one changed in the workspace since it was
 * sent (widget-attach.mjs imagesOf), a placeholder that says so. */
function userImage(image) {
  if (image.url) return h("img", { src: image.url, alt: image.name, title: image.name });
  const why = `${image.name}: changed since it was sent`;
  return h("div", { class: "image-changed", role: "img", "aria-label": why, title: why }, why);
}

class AssistantTurn {
  /** @param {HTMLElement} box the conversation (it scrolls) @param {HTMLElement} [within] where a subagent's turn goes: its task call's card */
  constructor(box, within) {
    this.box = box;
    this.parts = h("div", { class: "parts" });
    this.pending = h("div", { class: "thinking", "aria-label": "Waiting for the model" }, h("span"), h("span"), h("span"));
    this.parts.append(this.pending);
    this.node = within
      ? h("div", { class: "msg subagent", part: "subagent-message" }, this.parts)
      : h(
          "div",
          { class: "msg assistant", part: "assistant-message" },
          h("div", { class: "mark", "aria-hidden": "true" }, icon("mark")),
          this.parts,
        );
    this.text = null; // the Markdown part text_deltas go to
    /** @type {{text: HTMLElement, pending: string[], frame: number} | null} the reasoning part: deltas wait for a frame */
    this.reasoning = null;
    this.cards = new Map(); // callId → card
    /** @type {Map<string, AssistantTurn>} the subagents' turns (a run's at the top only), by run id */
    this.subagents = new Map();
    stickToBottom(box, () => (within ?? box).append(this.node));
  }

  /** @param {import("../page/pyharness.d.ts").PyharnessEvent} event */
  event(event) {
    if (event.type !== "file_change" && event.parentRunId) return this.#subagentEvent(event);
    return this.#own(event);
  }

  /** A subagent's event: drawn in a card inside its task call's card (made at its start). */
  #subagentEvent(event) {
    let turn = this.subagents.get(event.runId);
    if (turn === undefined) {
      const turns = [this, ...this.subagents.values()];
      const card = turns.map((t) => t.cards.get(event.parentCallId)).find(Boolean);
      if (card === undefined) return;
      turn = new AssistantTurn(this.box, card.subagent(event.depth ?? 1));
      this.subagents.set(event.runId, turn);
    }
    turn.#own(event);
  }

  /** @param {import("../page/pyharness.d.ts").PyharnessEvent} event */
  #own(event) {
    switch (event.type) {
      case "text_delta":
        return this.#textDelta(event.delta);
      case "reasoning_delta":
        return this.#reasoningDelta(event.delta);
      case "tool_start":
        return this.#toolStart(event);
      case "tool_end":
        return this.#toolEnd(event);
      case "error": {
        const [title, hint] = RUN_ERRORS[event.code] ?? ["The run failed", "Send again, or check the model settings."];
        return this.#add(noticeNode(title, hint, `${event.code}: ${event.message}`));
      }
      case "notice":
        // 80 % of a budget: a quiet line, not an alarm (the run goes on)
        if (event.code === "budget") return this.#add(h("div", { class: "meta", role: "status" }, `Budget: ${event.message}`));
        return this.#add(
          noticeNode("A skill was skipped", "Fix the front matter of its SKILL.md (--- / name: / description: / ---).", event.message),
        );
      case "run_end":
        return this.#end(event);
    }
  }

  /** The harness was closed under the run. */
  fail(error) {
    this.#end({ stopReason: "error" });
    this.#add(noticeNode("The run was stopped", "The harness closed; it restarts when its configuration changes.", error.message));
  }

  #add(node) {
    stickToBottom(this.box, () => {
      this.pending?.remove();
      this.pending = null;
      this.parts.append(node);
    });
  }

  #textDelta(delta) {
    if (this.text === null) {
      const node = h("div", { class: "md streaming" });
      // Rendered in animation frames, a bounded piece at a time (markdown.mjs): a burst
      // of text never holds the page's main thread for long.
      this.text = new MarkdownStream(node, {
        around: (update) => stickToBottom(this.box, update),
        onDone: () => node.classList.remove("streaming"),
      });
      this.#add(node);
    }
    this.text.append(delta);
  }

  #reasoningDelta(delta) {
    if (this.reasoning === null) {
      const text = h("div", { class: "reasoning-text" });
      const node = h(
        "details",
        { class: "card reasoning" },
        h("summary", {}, icon("chevron"), "Thinking"),
        h("div", { class: "card-body" }, text),
      );
      this.reasoning = { text, pending: [], frame: 0 };
      this.#add(node);
    }
    // Coalesced: one text node per frame, however many deltas arrived in it.
    const reasoning = this.reasoning;
    reasoning.pending.push(delta);
    reasoning.frame ||= requestAnimationFrame(() => this.#flushReasoning(reasoning));
  }

  #flushReasoning(reasoning) {
    cancelAnimationFrame(reasoning.frame);
    reasoning.frame = 0;
    if (reasoning.pending.length) reasoning.text.append(reasoning.pending.splice(0).join(""));
  }

  /** The run is over and changed files: "Undo this run" below it. @param {HTMLElement} node */
  offerUndo(node) {
    this.#add(node);
  }

  /** A plan run's plan, for review (widget-plan.mjs planControl). */
  offerPlan(node) {
    this.#add(node);
  }

  /** A permission rule asks about a call: a panel under its card (drawn now if the
   * call's tool_start is still on its way). */
  approval(request, signal) {
    let card = this.cards.get(request.callId);
    if (!card) {
      this.#closeText();
      card = toolCard(request.tool, request.input ?? {});
      this.cards.set(request.callId, card);
      this.#add(card.node);
    }
    const panel = approvalPanel(request, signal);
    stickToBottom(this.box, () => card.node.after(panel.node));
    return panel;
  }

  #toolStart({ callId, name, arguments: args }) {
    if (this.cards.has(callId)) return; // drawn already, for its approval
    this.#closeText();
    const card = toolCard(name, args ?? {});
    this.cards.set(callId, card);
    this.#add(card.node);
  }

  #toolEnd({ callId, name, output, isError }) {
    let card = this.cards.get(callId);
    if (!card) {
      card = toolCard(name, {});
      this.cards.set(callId, card);
      this.#add(card.node);
    }
    stickToBottom(this.box, () => card.finish(output, isError));
  }

  #closeText() {
    if (this.reasoning) this.#flushReasoning(this.reasoning);
    if (this.text === null) return;
    this.text.finish(); // renders the rest now, or over the next frames if it is long
    this.text = null;
  }

  /** @param {{stopReason: string, usage?: import("../page/pyharness.d.ts").Totals, budget?: import("../page/pyharness.d.ts").BudgetLimit, interrupted?: boolean}} end */
  #end({ stopReason, usage, budget, interrupted }) {
    this.#closeText();
    this.pending?.remove();
    this.pending = null;
    for (const card of this.cards.values()) if (card.node.dataset.state === "running") card.finish("(interrupted)", true);
    const notes = [];
    if (interrupted) notes.push("Interrupted: the page was reloaded or closed during this run");
    else if (stopReason === "aborted") notes.push("Cancelled");
    if (stopReason === "max_steps") notes.push("Stopped at the step limit (maxSteps)");
    if (stopReason === "budget" && budget) {
      this.#add(noticeNode("Stopped by the budget", "This site's limit on what the agent may spend was reached.", budget.message));
    }
    const usageNote = usageLine(usage);
    if (usageNote) notes.push(usageNote);
    if (notes.length) this.#add(h("div", { class: "meta", part: "run-meta" }, notes.join(" · ")));
  }
}

/** A run's tokens (and cost, when the page gave prices), or "" when the model reported none.
 * @param {import("../page/pyharness.d.ts").Totals | undefined} usage */
function usageLine(usage) {
  if (!usage || usage.inputTokens + usage.outputTokens === 0) return "";
  const line = `${usage.inputTokens.toLocaleString()} tokens in · ${usage.outputTokens.toLocaleString()} out`;
  if (usage.cost === null || usage.cost === undefined) return line;
  return `${line} · $${usage.cost.toFixed(usage.cost < 0.01 ? 4 : 2)}`;
}

function noticeNode(title, hint, detail) {
  return h(
    "div",
    { class: "notice error", role: "alert", part: "notice" },
    h("div", { class: "notice-title" }, title),
    h("p", {}, hint),
    h("p", { class: "detail" }, detail),
  );
}

/** The argument that says most about a call, for the card's one-line summary. */
function headline(args) {
  if (typeof args.command === "string") return `$ ${args.command.split("\n")[0]}`;
  for (const key of ["path", "pattern", "query"]) if (typeof args[key] === "string") return args[key];
  const first = Object.values(args).find((v) => typeof v === "string");
  return first === undefined ? "" : String(first).split("\n")[0];
}

// A card's names, paths, arguments and output are the model's (or its code's): hidden
// characters in them are shown (visibleName), so "invoice\u202Efdp.exe" cannot pass for
// "invoiceexe.pdf". Multi-line text keeps its newlines and tabs.
const LINES = { lines: true };

function toolCard(name, args) {
  const status = h("span", { class: "tool-status" }, "running…");
  const badge = h("span", { class: "tool-icon" }, icon("spinner"));
  const list = h("dl", { class: "args" });
  for (const [key, value] of Object.entries(args)) {
    const text = typeof value === "string" ? value : JSON.stringify(value, null, 2);
    list.append(h("dt", {}, ...visibleName(key)), h("dd", {}, ...visibleName(text, LINES)));
  }
  const body = h("div", { class: "card-body" });
  if (list.childElementCount) body.append(h("div", {}, h("div", { class: "label" }, "Arguments"), list));
  const node = h(
    "details",
    { class: "card tool", "data-state": "running", "data-tool": name, part: "tool-card" },
    h(
      "summary",
      {},
      icon("chevron"),
      badge,
      h("span", { class: "tool-name" }, ...visibleName(name)),
      h("span", { class: "tool-arg" }, ...visibleName(headline(args))),
      status,
    ),
    body,
  );
  return {
    node,
    /** A subagent started by this call: a collapsible card of its own in the body, open. */
    subagent(depth) {
      const inner = h("div", { class: "card-body" });
      body.append(
        h(
          "details",
          { class: "card subagent-card", open: "", "data-depth": String(depth), part: "subagent-card" },
          h(
            "summary",
            {},
            icon("chevron"),
            h("span", { class: "tool-name" }, "Subagent"),
            h("span", { class: "tool-arg" }, `depth ${depth}`),
          ),
          inner,
        ),
      );
      node.open = true;
      return inner;
    },
    finish(output, isError) {
      node.dataset.state = isError ? "error" : "ok";
      status.textContent = isError ? "failed" : "done";
      badge.replaceChildren(icon(isError ? "alert" : "check"));
      const text = String(output ?? "");
      const pre = h(
        "pre",
        { class: "out" },
        ...visibleName(text.length > OUTPUT_SHOWN ? text.slice(0, OUTPUT_SHOWN) : text || "(no output)", LINES),
      );
      body.append(h("div", {}, h("div", { class: "label" }, isError ? "Error" : "Output"), pre));
      if (text.length > OUTPUT_SHOWN) {
        const more = h("button", { type: "button", class: "more" }, `Show all (${text.length.toLocaleString()} characters)`);
        more.addEventListener("click", () => {
          pre.replaceChildren(...visibleName(text, LINES));
          more.remove();
        });
        body.append(more);
      }
    },
  };
}
