// The page code of e2e/test_preview.py's rows, on e2e/pages/index.html: h.preview() of
// the site a model (on the scripted provider server) writes, seen from the page.

const { boot } = window;

/** Resolves once `preview` is in one of `states` (with its load count past `after`). */
function until(preview, states, after = 0, ms = 20_000) {
  return new Promise((resolve, reject) => {
    const check = () => {
      if (states.includes(preview.state) && preview.loads > after) {
        stop();
        clearTimeout(timer);
        resolve(snapshot(preview));
      }
    };
    const stop = preview.subscribe(check);
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`the preview stayed ${preview.state} (load ${preview.loads}): ${JSON.stringify(preview.entries)}`));
    }, ms);
    check();
  });
}

function snapshot(preview) {
  return { state: preview.state, loads: preview.loads, entry: preview.entry, entries: preview.entries.map((e) => ({ ...e })) };
}

async function prompt(h, text) {
  const run = h.prompt(text);
  const events = [];
  for await (const e of run) events.push(e);
  return { events, done: await run.done };
}

function mount(preview) {
  const box = document.createElement("div");
  box.id = "preview-box";
  box.style.cssText = "width: 640px; height: 420px; border: 1px solid #888";
  box.append(preview.element);
  document.body.append(box);
}

/** The model writes a site, the preview (opened before) shows it; a later change to its
 * style reloads it once. Returns each step's state; the test looks inside the frame. */
export async function siteThenRestyle(model) {
  const h = await boot({ model, preview: true });
  window.h = h;
  const preview = h.preview({ root: "site" });
  window.preview = preview;
  mount(preview);
  const empty = await until(preview, ["loaded", "failed"]);
  const first = await prompt(h, "make me a site");
  const shown = await until(preview, ["loaded"], empty.loads);
  return { empty, first: first.done, shown };
}

/** After siteThenRestyle: the next prompt changes style.css; how many loads it caused. */
export async function restyle() {
  const before = window.preview.loads;
  const run = await prompt(window.h, "make the title blue");
  const shown = await until(window.preview, ["loaded"], before);
  await new Promise((r) => setTimeout(r, 800)); // no second reload comes
  return { done: run.done, shown, loads: window.preview.loads - before, state: window.preview.state };
}

/** The model asks preview_errors, fixes, asks again: what each tool call answered. */
export async function errorsToTheModel(model) {
  const h = await boot({ model, preview: true });
  window.h = h;
  const preview = h.preview({ root: "site" });
  window.preview = preview;
  mount(preview);
  const run = await prompt(h, "make a site and check it");
  const ends = run.events.filter((e) => e.type === "tool_end" && e.name === "preview_errors").map((e) => e.output);
  return { done: run.done, ends, entries: preview.entries, state: preview.state, tools: h.tools.map((t) => t.name) };
}

/** Close, then a fresh preview: the page is fine, the frame gone. */
export async function closeAndReopen() {
  window.preview.close();
  const gone = window.preview.iframe === null && !document.querySelector("#preview-box iframe");
  const again = window.h.preview({ root: "site" });
  document.getElementById("preview-box").replaceChildren(again.element);
  window.preview = again;
  const shown = await until(again, ["loaded", "failed"]);
  return { gone, shown };
}
