// embed/page/approvals.mjs: what onApproval returns becomes exactly one answer, and every
// way it can fail (a throw, a wrong value, no handler, a cancel, close) is a deny.
import assert from "node:assert/strict";
import { test } from "node:test";
import { approvalAnswer, MAX_APPROVAL_MESSAGE, PageApprovals } from "../../embed/page/approvals.mjs";

test("a decision string or {decision, message} is taken; anything else is a deny naming it", () => {
  assert.deepEqual(approvalAnswer("once"), { decision: "once" });
  assert.deepEqual(approvalAnswer("always"), { decision: "always" });
  assert.deepEqual(approvalAnswer({ decision: "deny", message: "no" }), { decision: "deny", message: "no" });
  assert.deepEqual(approvalAnswer({ decision: "once", message: null }), { decision: "once" });
  assert.equal(approvalAnswer({ decision: "deny", message: "x".repeat(5000) }).message.length, MAX_APPROVAL_MESSAGE);
  for (const odd of ["yes", "ONCE", true, 1, null, undefined, {}, { decision: "allow" }, ["once"]]) {
    const answer = approvalAnswer(odd);
    assert.equal(answer.decision, "deny", String(odd));
    assert.match(answer.message, /^onApproval returned .*, not "once", "always" or "deny"$/);
  }
});

const request = { runId: "r", callId: "call_1", tool: "write", input: {}, rule: "write", subject: "a", diff: null };

async function answerOf(onApproval) {
  const posted = [];
  const approvals = new PageApprovals(onApproval, (m) => posted.push(m));
  await approvals.ask({ id: 7, request });
  return posted;
}

test("each approval is answered exactly once, and fails closed", async () => {
  assert.deepEqual(await answerOf(async () => "always"), [{ type: "approvalres", id: 7, decision: "always" }]);
  const [thrown] = await answerOf(() => {
    throw new Error("broken handler");
  });
  assert.equal(thrown.decision, "deny");
  assert.match(thrown.message, /onApproval threw: broken handler/);
  const [none] = await answerOf(undefined);
  assert.equal(none.decision, "deny");
  assert.match(none.message, /no onApproval handler/);
  assert.throws(() => new PageApprovals("deny", () => {}), /onApproval must be a function/);
});

test("a cancelled or closed approval aborts the signal and sends no answer", async () => {
  for (const how of ["cancel", "close"]) {
    const posted = [];
    let signal;
    const approvals = new PageApprovals(
      (_r, opts) => {
        signal = opts.signal;
        return new Promise((resolve) => opts.signal.addEventListener("abort", () => resolve("once")));
      },
      (m) => posted.push(m),
    );
    const asked = approvals.ask({ id: 1, request });
    assert.equal(approvals.isPending(1), true);
    if (how === "cancel") approvals.cancel(1);
    else approvals.abortAll();
    await asked;
    assert.equal(signal.aborted, true);
    assert.equal(signal.reason.code, "ECANCELED");
    assert.deepEqual(posted, [], how); // the late "once" is never sent
    assert.equal(approvals.isPending(1), false);
  }
});

test("an approval the page refused (outside a run) is denied at once", () => {
  const posted = [];
  new PageApprovals(undefined, (m) => posted.push(m)).refuse({ id: 3 }, "no run is in progress");
  assert.deepEqual(posted, [
    { type: "approvalres", id: 3, decision: "deny", message: "the page refused the request: no run is in progress" },
  ]);
});
