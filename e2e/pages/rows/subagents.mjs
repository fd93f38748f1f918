// The page code of e2e/test_subagents.py's rows, on e2e/pages/index.html: runs whose
// model delegates to subagents (the task tool), seen from the page.

const { boot } = window;

/** Every event of one run (its subagents' included), and its result. */
async function everyEvent(run, until) {
  const events = [];
  for await (const e of run) {
    events.push(e);
    if (until?.(e)) run.cancel();
  }
  return { events, done: await run.done };
}

/** Two subagents at once writing a file each; what the parent's diff shows; its revert. */
export async function twoAtOnce(turns) {
  const h = await boot({ model: { api: "scripted", turns }, subagents: true });
  const told = [];
  const unsubscribe = h.subscribe((e) => told.push(e));
  const run = h.prompt("write both files, in parallel");
  const { events, done } = await everyEvent(run);
  unsubscribe();
  const names = async () => (await h.fs.readdir(".")).map((e) => e.name).sort();
  const files = await names();
  const diff = (await run.diff()).map((d) => d.path).sort();
  // Each subagent has a checkpoint of its own within the parent run's: one taken back alone.
  const subs = (await h.checkpoints()).filter((c) => c.parentRunId === run.id).map((c) => c.runId);
  const subDiff = (await h.diff(subs[0])).map((d) => d.path);
  const alone = await h.revert(subs[0]);
  const afterOne = await names();
  await h.revert(alone.revertId); // redo
  const reverted = await run.revert();
  const after = await names();
  const left = (await h.checkpoints()).filter((c) => subs.includes(c.runId)).map((c) => c.revertedBy);
  h.close();
  return {
    events,
    done,
    files,
    diff,
    subs,
    subDiff,
    alone: alone.reverted,
    afterOne,
    reverted: reverted.reverted,
    after,
    left,
    told: told.length,
    runId: run.id,
  };
}

/** One subagent at a time, depth 1, two requests each: the second is refused a task
 * call and stopped by its budget; then a parent cancelled while its subagent streams. */
export async function limitsAndCancel(turns) {
  const h = await boot({
    model: { api: "scripted", turns },
    subagents: { maxConcurrent: 1, maxDepth: 1, budget: { requests: 2 } },
  });
  const limited = await everyEvent(h.prompt("delegate twice"));
  const cancelled = await everyEvent(h.prompt("delegate something slow"), (e) => e.type === "text_delta" && e.depth === 1);
  const after = await h.prompt("and now?").done;
  h.close();
  return { limited, cancelled, after };
}
