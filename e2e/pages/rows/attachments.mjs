// The page code of e2e/test_attachments.py's rows: images and files attached to a prompt,
// and images the read tool shows.

const { boot, settle } = window;

/** A prompt with `attachments` ({name, type, bytes: number[] (padTo: zeros up to that
 * size; blob: as a Blob) | text: string}) after
 * writing `files` ({path: number[]}) with h.fs; the run's end and what /work/attachments holds. */
export async function promptWith(model, text, attachments, files = {}) {
  const h = await boot({ model });
  for (const [path, bytes] of Object.entries(files)) {
    if (path.includes("/")) await h.fs.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
    await h.fs.writeFile(path, new Uint8Array(bytes));
  }
  const bytesOf = (a) => {
    const out = new Uint8Array(Math.max(a.bytes.length, a.padTo ?? 0)); // zeros after the bytes
    out.set(a.bytes);
    return out;
  };
  const given = attachments.map((a) => ({
    name: a.name,
    type: a.type,
    data: a.text !== undefined ? a.text : a.blob ? new Blob([bytesOf(a)], { type: a.type }) : bytesOf(a),
  }));
  const run = h.prompt(text, { attachments: given });
  const events = [];
  const done = await settle(
    (async () => {
      for await (const e of run) events.push(e.type);
      return run.done;
    })(),
  );
  const listed = await settle(h.fs.readdir("attachments"));
  h.close();
  return { done, events, listed };
}

/** A prompt with one attachment on a harness with the shell, whose (scripted) model
 * runs `turns`; then what the thread's run_start keeps of the attachment and the file's
 * SHA-256 in /work now. */
export async function keptOverRewrite(turns, name, bytes) {
  const h = await boot({ model: { api: "scripted", turns }, shell: true });
  const run = h.prompt("here", { attachments: [{ name, type: "image/png", data: new Uint8Array(bytes) }] });
  for await (const _ of run);
  const done = await run.done;
  const { events } = await h.threads.transcript();
  const start = events.find((e) => e.type === "run_start");
  const now = await window.sha256(await h.fs.readFile(`attachments/${name}`));
  h.close();
  return { stop: done.stopReason, attachments: start.attachments, fileSha256Now: now };
}
