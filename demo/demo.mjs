// The `make demo` page: the <pyharness-chat> widget with a model from (in order) the
// page's settings, the environment of `pyharness demo` (config/model.json), or the
// offline scripted demo.
import "/pyharness/widget.mjs";
import { demoTurns, LIVE_SUGGESTIONS, SEED, SUGGESTIONS } from "./script.mjs";

const STORAGE = "pyharness-demo-settings";
const chat = document.getElementById("chat");
const dialog = document.getElementById("settings");
const form = document.getElementById("settings-form");

chat.addEventListener("pyharness-ready", async ({ detail: { harness } }) => {
  // The workspace is kept across reloads (OPFS): seed it only the first time, so what
  // the agent or the user changed stays as it is.
  const fresh = harness.storage.restoredFiles === 0;
  for (const [path, text] of fresh ? Object.entries(SEED) : []) {
    const dir = path.split("/").slice(0, -1).join("/");
    if (dir) await harness.fs.mkdir(dir, { recursive: true });
    await harness.fs.writeFile(path, text);
  }
  await chat.refreshFiles();
  document.body.dataset.seeded = "yes";
});

await apply();

document.getElementById("open-settings").addEventListener("click", openSettings);
document.getElementById("banner-settings").addEventListener("click", openSettings);
document.getElementById("settings-reset").addEventListener("click", () => {
  sessionStorage.removeItem(STORAGE);
  dialog.close();
  void apply();
});
dialog.addEventListener("close", () => {
  if (dialog.returnValue !== "save") return;
  const data = Object.fromEntries(new FormData(form));
  const settings = { shell: data.shell === "on" };
  if (data.api !== "scripted") {
    settings.model = {
      api: data.api,
      model: data.model.trim() || PLACEHOLDERS[data.api][1],
      baseUrl: data.baseUrl.trim() || undefined,
      apiKey: data.apiKey || undefined,
    };
  }
  sessionStorage.setItem(STORAGE, JSON.stringify(settings));
  void apply();
});

const PLACEHOLDERS = {
  "openai-chat": ["https://api.openai.com/v1", "gpt-4.1-mini", "sk-…"],
  "anthropic-messages": ["https://api.anthropic.com/v1", "claude-sonnet-4-5", "sk-ant-…"],
};
form.elements.api.addEventListener("change", showFields);

/** The fields that matter for the chosen API, with its defaults as placeholders. */
function showFields() {
  const api = form.elements.api.value;
  const [baseUrl, model, key] = PLACEHOLDERS[api] ?? ["", "", ""];
  for (const [name, hint] of [
    ["baseUrl", baseUrl],
    ["model", model],
    ["apiKey", key],
  ]) {
    form.elements[name].placeholder = hint;
    form.elements[name].disabled = api === "scripted";
  }
}

/** Configure the widget from the settings, the environment, or the offline script. */
async function apply() {
  const saved = JSON.parse(sessionStorage.getItem(STORAGE) ?? "null");
  const fromEnv = await fetch("config/model.json").then(
    (r) => (r.ok ? r.json() : null),
    () => null,
  );
  let model, source, kind;
  if (saved?.model) {
    [model, source, kind] = [saved.model, `${saved.model.api} ${saved.model.model ?? ""} · from settings`, "live"];
  } else if (fromEnv?.model && !saved) {
    [model, source, kind] = [fromEnv.model, `${fromEnv.model.api} ${fromEnv.model.model} · from the environment`, "live"];
  } else {
    [model, source, kind] = [{ api: "scripted", turns: demoTurns() }, "Offline demo · scripted model", "offline"];
  }
  const sourceBadge = document.getElementById("source");
  sourceBadge.textContent = source;
  sourceBadge.dataset.kind = kind;
  document.getElementById("banner").hidden = kind !== "offline";
  chat.suggestions = kind === "offline" ? SUGGESTIONS : LIVE_SUGGESTIONS;
  chat.options = { model, shell: saved ? saved.shell : true };
  window.demo = { model: model.api, source: kind };
}

function openSettings() {
  const saved = JSON.parse(sessionStorage.getItem(STORAGE) ?? "null");
  const model = saved?.model ?? {};
  form.elements.api.value = model.api ?? "scripted";
  form.elements.baseUrl.value = model.baseUrl ?? "";
  form.elements.model.value = model.model ?? "";
  form.elements.apiKey.value = model.apiKey ?? "";
  form.elements.shell.checked = saved ? saved.shell : true;
  showFields();
  dialog.showModal();
}
