// The page code of e2e/test_budget.py's rows, one export per row, on e2e/pages/index.html:
// a model on the scripted provider server that keeps calling tools, stopped by budgets.

const { boot, settle } = window;

/** Every event of one prompt, and its result. */
async function everyEvent(h, prompt) {
  const run = h.prompt(prompt);
  const events = [];
  for await (const e of run) events.push(e);
  return { events, done: await run.done };
}

/** One prompt per budget: each in turn is the run's only limit (h.setBudget). */
export async function eachLimit(model, budgets) {
  const h = await boot({ model });
  const runs = [];
  for (const budget of budgets) {
    await h.setBudget({ run: budget });
    runs.push(await everyEvent(h, `keep writing under ${JSON.stringify(budget)}`));
  }
  const usage = await h.usage();
  const files = (await h.fs.readdir(".")).map((e) => e.name).sort();
  h.close();
  return { runs, usage, files };
}

/** A thread budget: spent, refused with a clear error for a bad raise, then raised. */
export async function threadBudget(model, budget) {
  const h = await boot({ model, budget });
  const first = await everyEvent(h, "first");
  const second = await everyEvent(h, "second");
  const before = await h.usage();
  const bad = await settle(h.setBudget({ thread: { requests: -1 } }));
  const raised = await h.setBudget({ thread: { requests: 100 } });
  const third = await everyEvent(h, "third");
  const threads = await h.threads.list();
  h.close();
  return { first, second, before, bad, raised, third, threads };
}
