// The page code of e2e/test_packages.py's rows: pip in the sandbox, from the bundle's
// package index and from an index the page allows. One export per row.

const { boot } = window;

/** Each prompt's turns (one run each) with these options; the tool_end events of every
 * run, and how each run ended. `cancelOn`: the command whose start cancels its run (a
 * hard stop: the sandbox does not answer the cancel and is torn down). */
export async function pipRuns(prompts, options, cancelOn = null) {
  await cookieStore.set("session", "page-cookie-secret"); // the user's cookie, which must not go out
  const turns = prompts.flat();
  const h = await boot({ model: { api: "scripted", turns }, shell: { timeoutMs: 60000 }, ...options });
  const runs = [];
  for (let i = 0; i < prompts.length; i++) {
    const run = h.prompt(`prompt ${i}`);
    const ends = [];
    for await (const e of run) {
      if (e.type === "tool_start" && cancelOn !== null && e.arguments?.command === cancelOn) setTimeout(() => h.cancel(), 500);
      if (e.type === "tool_end") ends.push({ output: e.output, isError: e.isError });
    }
    runs.push({ ends, done: await run.done });
  }
  const containment = h.containment;
  const diagnostics = h.diagnostics.map((d) => d.code);
  h.close();
  return { runs, containment, diagnostics };
}

/** One prompt's tool_end events on an OPFS workspace, leaving the harness open (a reload
 * follows). */
export async function pipOnWorkspace(workspace, turns, timeoutMs = 60000) {
  const h = await boot({ model: { api: "scripted", turns }, shell: { timeoutMs }, storage: "opfs", workspace });
  const ends = [];
  for await (const e of h.prompt("go")) if (e.type === "tool_end") ends.push({ output: e.output, isError: e.isError });
  return { ends, storage: h.storage };
}
