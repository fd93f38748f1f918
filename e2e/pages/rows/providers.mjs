// The page code of e2e/test_providers.py's rows, one export per row, on e2e/pages/index.html;
// called from Python by e2e/conftest.py's call() with the model (the scripted provider
// server's URL in it). Each returns JSON values for the row's assertions, which stay in Python.

/** The page's helper (index.html): boot, here with a real wire-format model. */
const { boot } = window;

/** Every event of one prompt, and its result. */
async function everyEvent(h, prompt) {
  const run = h.prompt(prompt);
  const events = [];
  for await (const e of run) events.push(e);
  return { events, done: await run.done };
}

/** The model writes a.txt with a tool call. */
export async function turnWithAWrite(model) {
  const h = await boot({ model });
  const { events, done } = await everyEvent(h, "write a.txt");
  const file = await h.fs.readFile("a.txt", "utf8");
  h.close();
  return { events, done, file };
}

/** The model lists a workspace holding seed.txt. */
export async function turnWithAnLs(model) {
  const h = await boot({ model });
  await h.fs.writeFile("seed.txt", "x");
  const { events, done } = await everyEvent(h, "what is here?");
  h.close();
  return { events, done };
}

/** A prompt through a page fetch that adds a header (counted in window.proxied), then one without it. */
export async function pageFetchThenDirect(model) {
  const fetchWithAuth = (url, init) => {
    window.proxied = (window.proxied || 0) + 1;
    return fetch(url, { ...init, headers: { ...init.headers, "x-page-auth": "secret" } });
  };
  const h = await boot({ model, fetch: fetchWithAuth });
  const { done } = await everyEvent(h, "hi");
  h.close();
  const h2 = await boot({ model });
  const direct = await h2.prompt("no header").done;
  h2.close();
  return { done, proxied: window.proxied, direct };
}

/** Two prompts; how long the first took. */
export async function twoPromptsTimed(model) {
  const h = await boot({ model });
  const t0 = performance.now();
  const first = await h.prompt("one").done;
  const waited = performance.now() - t0;
  const second = await h.prompt("two").done;
  h.close();
  return { first, waited, second };
}

/** The page's tools: one that writes through h.fs, one that throws, one that hangs past its timeout, and a read that replaces the built-in. */
const PAGE_TOOLS = [
  {
    name: "save_note",
    description: "Save a note through h.fs",
    parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    run: async ({ text }, { fs, signal }) => {
      await fs.writeFile("note.txt", text);
      return { saved: text.length, aborted: signal.aborted };
    },
  },
  {
    name: "explode",
    run: async () => {
      throw new Error("kaboom from the page");
    },
  },
  {
    name: "hang",
    timeoutMs: 300,
    run: (_input, { signal }) =>
      new Promise(() => {
        signal.addEventListener("abort", () => {
          window.hangAborted = true;
        });
      }),
  },
  { name: "read", description: "the page's own read", run: async () => "page read wins" },
];

/** One prompt with PAGE_TOOLS. */
export async function pageTools(model) {
  const h = await boot({ model, tools: PAGE_TOOLS });
  const { events, done } = await everyEvent(h, "use the page tools");
  const note = await h.fs.readFile("note.txt", "utf8");
  const names = h.tools.map((t) => t.name);
  h.close();
  return { events, done, note, names, hangAborted: window.hangAborted === true };
}

/** Cancel at the fifth text delta, then prompt again. */
export async function cancelThenPrompt(model) {
  const h = await boot({ model });
  const run = h.prompt("long");
  let n = 0;
  for await (const e of run) if (e.type === "text_delta" && ++n === 5) h.cancel();
  const first = await run.done;
  const second = await h.prompt("again").done;
  h.close();
  return { first, second };
}
