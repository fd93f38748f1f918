// The page code of the widget rows (e2e/test_widget.py, test_widget_sessions.py and
// test_widget_truth.py), on e2e/pages/widget.html (window.mount puts a configured
// <pyharness-chat> on it); called from Python by e2e/conftest.py's call(). Each returns
// JSON values for the row's assertions, which stay in Python.

const chat = () => document.querySelector("pyharness-chat");

/** What has the keyboard focus in the widget: its label and its outline. */
export function focusedOutline() {
  const el = chat().shadowRoot.activeElement;
  const style = getComputedStyle(el);
  return [el.getAttribute("aria-label"), style.outlineStyle, style.outlineWidth];
}

/** A <script type="text/plain"> with this id and text, for system-prompt-from. */
export function addPromptScript(id, text) {
  const prompt = document.createElement("script");
  prompt.type = "text/plain";
  prompt.id = id;
  prompt.textContent = text;
  document.body.append(prompt);
}

/** Mount the demo's widget (demo/script.mjs: its turns and suggestions) and seed its files
 * once it is ready; document.body.dataset.seeded is "yes" then. */
export async function mountTheDemo() {
  const { SEED, SUGGESTIONS, demoTurns } = await import("/demo/script.mjs");
  const demo = window.mount({ shell: true }, { model: { api: "scripted", turns: demoTurns() } }, SUGGESTIONS);
  demo.addEventListener("pyharness-ready", async ({ detail: { harness } }) => {
    await harness.fs.mkdir("data");
    for (const [path, text] of Object.entries(SEED)) await harness.fs.writeFile(path, text);
    await demo.refreshFiles();
    document.body.dataset.seeded = "yes";
  });
}

/** Send a prompt and terminate the harness worker as soon as the write tool has ended. */
export function sendAndKillAfterTheWrite(text) {
  const c = chat();
  c.harness.subscribe((e) => {
    if (e.type === "tool_end" && e.name === "write") c.harness._worker.terminate();
  });
  c.send(text).catch(() => {});
}

/** Open the workspace `name` in a harness of the page's own (window.other), outside the widget. */
export async function openWorkspaceElsewhere(name) {
  const { createHarness } = await import("/pyharness/pyharness.mjs");
  window.other = await createHarness({ workspace: name, model: { api: "scripted", turns: [] } });
}

/** The last answer's links: [text, title, the destination shown beside it or null]. */
export function answerLinks() {
  const answer = [...chat().shadowRoot.querySelectorAll(".md")].at(-1);
  return [...answer.querySelectorAll("a")].map((a) => [
    a.textContent,
    a.title,
    a.nextElementSibling?.className === "link-dest" ? a.nextElementSibling.textContent : null,
  ]);
}

/** Write each path (its own path as its text) under the folder dir, made first; then list the files again. */
export async function seedFiles(dir, paths) {
  const fs = chat().harness.fs;
  await fs.mkdir(dir, { recursive: true });
  for (const path of paths) await fs.writeFile(path, path);
  await chat().refreshFiles();
}

/** The names at the top of the widget's workspace, sorted. */
export async function listed() {
  return (await chat().harness.fs.readdir(".")).map((e) => e.name).sort();
}

/** From now on every h.fs.rm fails (EBUSY). */
export function makeRmFail() {
  chat().harness.fs.rm = async (path) => {
    throw new Error(`EBUSY: ${path} is in use`);
  };
}
