// The page code of e2e/test_mcp.py's rows: MCP servers as tools. The harness stays open
// between rows of one test (window.mcpHarness), so the test can kill and restart the
// server under it.

const { boot } = window;

/** Every message the page sends to a worker, as JSON text (to look for secrets in). */
const sent = [];
const post = Worker.prototype.postMessage;
Worker.prototype.postMessage = function record(message, ...rest) {
  try {
    sent.push(JSON.stringify(message));
  } catch {
    sent.push(String(message));
  }
  return post.call(this, message, ...rest);
};

/** Boot with these MCP servers and the scripted turns (or a `model`); what the harness
 * shows of them. */
export async function bootWith(mcp, turns, permissions = undefined, model = undefined) {
  const t0 = performance.now();
  const h = await boot({ model: model ?? { api: "scripted", turns }, mcp, permissions });
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
