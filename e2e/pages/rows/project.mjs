// The page code of e2e/test_project.py's rows: project instructions and skills.

const { boot } = window;

/** Write `files` ({path: text}) with h.fs, then run one prompt per entry of `edits`
 * (each: files to write before that prompt); how each run ended, its events and the
 * messages of its notices. `options`: more createHarness options (skills, …). */
export async function promptsOver(model, files, edits, options = {}) {
  const h = await boot({ model, ...options });
  const write = async (entries) => {
    for (const [path, text] of Object.entries(entries)) {
      if (path.includes("/")) await h.fs.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
      await h.fs.writeFile(path, text);
    }
  };
  await write(files);
  const runs = [];
  for (const [i, before] of edits.entries()) {
    await write(before);
    const events = [];
    const notices = [];
    const run = h.prompt(`prompt ${i}`);
    for await (const e of run) {
      events.push(e.type === "notice" ? `notice:${e.code}` : e.type);
      if (e.type === "notice") notices.push(e.message);
    }
    runs.push({ done: await run.done, events, notices });
  }
  h.close();
  return runs;
}
