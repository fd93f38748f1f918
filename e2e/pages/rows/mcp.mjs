// The page code of e2e/test_mcp.py's rows: MCP servers as tools. The harness stays open
// between rows of one test (window.mcpHarness), so the test can kill and restart the
// server under it.

import { sentToWorkers as sent } from "./worker-messages.mjs";

const { boot } = window;

/** Boot with these MCP servers and the scripted turns (or a `model`); what the harness
 * shows of them. */
export async function bootWith(mcp, turns, permissions = undefined, model = undefined, storage = undefined) {
  const t0 = performance.now();
  const h = await boot({ model: model ?? { api: "scripted", turns }, mcp, permissions, ...(storage ? { storage } : {}) });
  window.mcpHarness = h;
  return {
    bootMs: performance.now() - t0,
    tools: h.tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })),
    mcp: h.mcp,
    diagnostics: h.diagnostics.map((d) => ({ code: d.code, message: d.message })),
  };
}

/** One prompt on the open harness: its tool_end events. */
export async function prompt(text) {
  const ends = [];
  const run = window.mcpHarness.prompt(text);
  for await (const e of run) if (e.type === "tool_end") ends.push({ name: e.name, output: e.output, isError: e.isError });
  return { ends, done: await run.done };
}

/** Whether any message to a worker so far carried `text`; then close the harness. */
export function sentAny(text) {
  const found = sent.some((m) => m.includes(text));
  window.mcpHarness?.close();
  return found;
}

/**
 * One prompt on the open harness while the page asks the worker for a file every 10 ms
 * (h.fs.stat): the longest the worker took to answer, from the page. With `cancelOn`,
 * the run is cancelled `cancelAfterMs` after that tool's call started, and how long the
 * run took to end after the cancel is measured too.
 */
export async function promptWatched(text, cancelOn = null, cancelAfterMs = 500) {
  const h = window.mcpHarness;
  await h.fs.writeFile("probe.txt", "probe");
  const ends = [];
  let longestFs = 0;
  let probes = 0;
  let watching = true;
  const watcher = (async () => {
    while (watching) {
      const t0 = performance.now();
      await h.fs.stat("probe.txt");
      longestFs = Math.max(longestFs, performance.now() - t0);
      probes++;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  })();
  const run = h.prompt(text);
  let cancelledAt = null;
  for await (const e of run) {
    if (e.type === "tool_start" && e.name === cancelOn && cancelledAt === null) {
      setTimeout(() => {
        cancelledAt = performance.now();
        run.cancel();
      }, cancelAfterMs);
    }
    if (e.type === "tool_end") ends.push({ name: e.name, output: e.output, isError: e.isError });
  }
  const done = await run.done;
  const endedAfterCancelMs = cancelledAt === null ? null : performance.now() - cancelledAt;
  watching = false;
  await watcher;
  return { ends, stop: done.stopReason, longestFsMs: longestFs, probes, endedAfterCancelMs };
}

/** Every message to a worker so far that carried `text` (the first 300 characters of
 * each), leaving the harness open. */
export function sentWith(text) {
  return sent.filter((m) => m.includes(text)).map((m) => m.slice(0, 300));
}
