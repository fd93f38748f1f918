// The page code of e2e/test_soak.py: a long thread of prompts, each of four tool turns
// and an answer, timed one by one, and the memory of the page and its worker. Called
// from Python by e2e/conftest.py's call(); the harness stays on the page between calls.

/** Four tool turns and an answer for prompt `i`: write, read, edit, ls. */
function prompt(i) {
  const path = `notes/f${i % 10}.txt`;
  return [
    { text: `Writing ${i}.`, toolCalls: [{ name: "write", arguments: { path, content: `prompt ${i}\n`.repeat(20) } }] },
    { text: "Reading.", toolCalls: [{ name: "read", arguments: { path } }] },
    {
      text: "Editing.",
      toolCalls: [{ name: "edit", arguments: { path, edits: [{ oldText: `prompt ${i}\n`.repeat(20), newText: `edited ${i}\n` }] } }],
    },
    { text: "Listing.", toolCalls: [{ name: "ls", arguments: { path: "notes" } }] },
    { text: `Done with prompt ${i}.` },
  ];
}

const soak = { h: null, done: 0, ms: [] };

/** Boot a harness whose scripted model answers `prompts` prompts, with a context window
 * of `contextWindow` tokens (older turns are summarised to fit, as with a real model). */
export async function start(prompts, contextWindow, storage = undefined) {
  soak.h?.close();
  const turns = [];
  for (let i = 0; i < prompts; i++) turns.push(...prompt(i));
  soak.h = await window.boot({ model: { api: "scripted", turns, contextWindow }, ...(storage ? { storage } : {}) });
  soak.done = 0;
  soak.ms = [];
  return { crossOriginIsolated };
}

/** Run the next `count` prompts, each to its end; the milliseconds of each. Every tool
 * call must succeed (a failing tool would make the prompts cheaper, not the same). */
export async function run(count) {
  const ms = [];
  for (let n = 0; n < count; n++) {
    const i = soak.done++;
    const started = performance.now();
    const run = soak.h.prompt(`prompt ${i}`);
    let failed = null;
    for await (const event of run) if (event.type === "tool_end" && event.isError) failed ??= `${event.name}: ${event.output}`;
    const done = await run.done;
    ms.push(performance.now() - started);
    if (failed || done.stopReason !== "stop") throw new Error(`prompt ${i}: ${failed ?? JSON.stringify(done)}`);
  }
  soak.ms.push(...ms);
  return ms;
}

/** The memory now: the page and its workers as Chromium measures them
 * (performance.measureUserAgentSpecificMemory, on a cross-origin isolated page; it
 * collects garbage first), and the worker's own view (its JS heap, the Pyodide heap). */
export async function memory() {
  const stats = await soak.h._request({ type: "stats" });
  let renderer = null;
  const scopes = {};
  if (crossOriginIsolated && performance.measureUserAgentSpecificMemory) {
    const measured = await performance.measureUserAgentSpecificMemory();
    renderer = measured.bytes;
    for (const { bytes, attribution, types } of measured.breakdown) {
      const scope = attribution.map((a) => a.scope).join("+") || types.join("+") || "other";
      scopes[scope] = (scopes[scope] ?? 0) + bytes;
    }
  }
  return { renderer, scopes, workerJsHeap: stats.jsHeapBytes, wasm: stats.wasmBytes };
}

export function stop() {
  soak.h?.close();
  soak.h = null;
}
