// The page code of e2e/test_reopen_scale.py: a stored OPFS workspace of 10,000 small files
// reopened beside an empty one (createHarness after the page is loaded again).

const scripted = { api: "scripted", turns: [] };
const pause = () => new Promise((resolve) => setTimeout(resolve, 150)); // the workspace's lock goes with the worker

/** Store the zip (base64) as workspace `name`; the files it holds. */
export async function store(name, base64) {
  const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
  const h = await window.pyharness.createHarness({ storage: "opfs", workspace: name, model: scripted });
  const imported = bytes.length ? await h.fs.importZip(bytes, { replace: true }) : { files: 0 };
  const kind = h.storage.kind;
  h.close();
  await pause();
  return { kind, files: imported.files };
}

/** Reopen workspace `name`: the milliseconds until createHarness resolves, the files restored. */
export async function reopen(name) {
  const started = performance.now();
  const h = await window.pyharness.createHarness({ storage: "opfs", workspace: name, model: scripted });
  const ms = performance.now() - started;
  const { kind, restoredFiles } = h.storage;
  h.close();
  await pause();
  return { ms, kind, restoredFiles };
}

export async function remove(names) {
  for (const name of names) await window.pyharness.deleteWorkspace(name);
}
