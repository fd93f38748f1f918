// Workspace scaling for `pyharness bench` (tooling/bench/scaling.py drives these): what a
// bash call, a reopened workspace and the sandbox's first copy cost as /work fills up,
// each beside the same step on an empty workspace. The zips are made in Python and
// served at /zips/ (one h.fs.importZip writes them all).
import { createHarness, deleteWorkspace } from "/pyharness/pyharness.mjs";
import { sandboxReady } from "./bench.mjs";

const scripted = (turns = []) => ({ api: "scripted", turns });
const now = () => performance.now();
const settle = () => new Promise((r) => setTimeout(r, 100)); // the workspace's lock goes with the worker
const bashCalls = (n, command = "true") => Array.from({ length: n }, () => ({ name: "bash", arguments: { command } }));

async function importZip(h, url, files) {
  const data = new Uint8Array(await (await fetch(url)).arrayBuffer());
  const got = await h.fs.importZip(data);
  if (got.files !== files) throw new Error(`importZip wrote ${got.files} of ${files} files`);
}

/** tool_start to tool_end of each bash call of one run (they run one after another). */
async function callTimes(h, text) {
  const times = [];
  let t = 0;
  for await (const e of h.prompt(text)) {
    if (e.type === "tool_start") t = now();
    if (e.type === "tool_end") {
      if (e.isError) throw new Error(`bash failed: ${e.output}`);
      times.push(now() - t);
    }
  }
  return times;
}

/** `n` bash calls of `true` on a fresh memory workspace holding `files` files (imported
 * from `zip`, none when null), after `warm` calls: the first of those is the sandbox's
 * first copy of /work (`firstMs`), the others let the interpreter warm up. */
export async function shellOnFiles({ zip = null, files = 0, n = 20, warm = 3 } = {}) {
  const h = await createHarness({
    storage: "memory",
    shell: true,
    model: scripted([{ toolCalls: bashCalls(warm) }, { text: "warm" }, { toolCalls: bashCalls(n) }, { text: "ok" }]),
  });
  if (zip) await importZip(h, zip, files);
  await sandboxReady(h);
  const [firstMs] = await callTimes(h, "warm up");
  const samples = await callTimes(h, "calls");
  h.close();
  return { firstMs, samples };
}

/** The first bash call (`true`) on a fresh harness whose workspace holds `count` files of
 * `mb` MB (h.fs.writeFile): the sandbox's first full copy of /work. */
export async function firstSync({ count = 100, mb = 1 } = {}) {
  const h = await createHarness({ storage: "memory", shell: true, model: scripted([{ toolCalls: bashCalls(1) }, { text: "ok" }]) });
  await h.fs.mkdir("big");
  for (let i = 0; i < count; i++) await h.fs.writeFile(`big/f${i}.bin`, new Uint8Array(mb * 1024 * 1024).fill(i));
  let bytes = 0;
  for (const entry of await h.fs.readdir("big")) bytes += (await h.fs.stat(`big/${entry.name}`)).size;
  await sandboxReady(h);
  const [ms] = await callTimes(h, "sync");
  h.close();
  return { ms, bytes };
}

/** A stored OPFS workspace `name` holding the files of `zip` (none when null). */
export async function makeWorkspace({ name, zip = null, files = 0 }) {
  const h = await createHarness({ storage: "opfs", workspace: name, model: scripted() });
  if (h.storage.kind !== "opfs") throw new Error(`asked for opfs, got ${h.storage.kind}`);
  if (zip) await importZip(h, zip, files);
  h.close();
  await settle();
}

/** createHarness on the stored workspace `name` until it resolves (the page was just
 * reloaded: nothing of it is in memory). */
export async function reopen({ name }) {
  const t = now();
  const h = await createHarness({ storage: "opfs", workspace: name, model: scripted() });
  const ms = now() - t;
  const { kind, restoredFiles } = h.storage;
  h.close();
  await settle();
  if (kind !== "opfs") throw new Error(`reopened ${name} as ${kind}`);
  return { ms, restored: restoredFiles };
}

export async function deleteWorkspaces({ names }) {
  for (const name of names) await deleteWorkspace(name);
}
