// The page's side of the permission rules (harness/policy/approvals.py): when a rule says
// "ask", the worker sends an `approval` and the page's `onApproval(request, {signal})`
// decides. Every approval is answered exactly once, and fails closed: a throw, an answer
// that is not one of the three decisions, no onApproval at all, a harness closing — each
// is a "deny" with a message saying why. The worker's timeout or a cancelled run aborts
// `signal` (`approvalcancel`); a late answer is then dropped by the worker.

import { HarnessError } from "./errors.mjs";

const DECISIONS = ["once", "always", "deny"];
export const MAX_APPROVAL_MESSAGE = 2000;

/**
 * What `onApproval` returned, as the worker takes it: `{decision, message?}`.
 * A decision string, or `{decision, message}`; anything else is a deny naming it.
 * @param {unknown} value
 * @returns {{decision: "once" | "always" | "deny", message?: string}}
 */
export function approvalAnswer(value) {
  const decision =
    typeof value === "string" ? value : value !== null && typeof value === "object" ? /** @type {any} */ (value).decision : undefined;
  if (!DECISIONS.includes(decision)) {
    const shown = typeof value === "string" ? JSON.stringify(value.slice(0, 40)) : typeof value;
    return { decision: "deny", message: `onApproval returned ${shown}, not "once", "always" or "deny"` };
  }
  const message = typeof value === "object" && value !== null ? /** @type {any} */ (value).message : undefined;
  if (message === undefined || message === null) return { decision };
  return { decision, message: String(message).slice(0, MAX_APPROVAL_MESSAGE) };
}

export class PageApprovals {
  /** @param {Function | undefined} onApproval @param {(message: any) => void} post */
  constructor(onApproval, post) {
    if (onApproval !== undefined && typeof onApproval !== "function") {
      throw new HarnessError("EINVAL", "EINVAL: onApproval must be a function (request, {signal}) => decision");
    }
    this._onApproval = onApproval ?? null;
    this._post = post;
    /** @type {Map<number, AbortController>} */
    this._pending = new Map();
  }

  /** One `approval` from the worker: ask, then answer. */
  async ask({ id, request }) {
    const controller = new AbortController();
    this._pending.set(id, controller);
    let answer;
    try {
      if (this._onApproval === null) {
        answer = { decision: "deny", message: "this page has no onApproval handler, so a call a rule asks about is denied" };
      } else {
        answer = approvalAnswer(await this._onApproval(request, { signal: controller.signal }));
      }
    } catch (err) {
      answer = { decision: "deny", message: `onApproval threw: ${(err instanceof Error ? err.message : String(err)).slice(0, 500)}` };
    }
    if (this._pending.get(id) !== controller) return; // cancelled meanwhile: nobody waits
    this._pending.delete(id);
    this._post({ type: "approvalres", id, ...answer });
  }

  /** An `approval` the table refused (outside a run): denied at once. */
  refuse({ id }, why) {
    this._post({
      type: "approvalres",
      id,
      decision: "deny",
      message: `the page refused the request: ${why}`.slice(0, MAX_APPROVAL_MESSAGE),
    });
  }

  isPending(id) {
    return this._pending.has(id);
  }

  /** The worker gave up on it (timeout, cancelled run): onApproval's signal aborts. */
  cancel(id, reason = "the approval is no longer needed (timed out, or its run was cancelled)") {
    const controller = this._pending.get(id);
    this._pending.delete(id);
    controller?.abort(new HarnessError("ECANCELED", `ECANCELED: ${reason}`));
  }

  /** The harness closed: every pending onApproval's signal aborts. */
  abortAll() {
    for (const id of [...this._pending.keys()]) this.cancel(id, "the harness was closed");
  }
}
