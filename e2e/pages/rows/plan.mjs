// The page code of e2e/test_plan.py's rows, on e2e/pages/index.html: plan runs of a
// hostile scripted model with the shell on, checked from the page.

const { boot, sha256 } = window;

/** Every event of one prompt, and its result. */
async function everyEvent(h, prompt, opts) {
  const run = h.prompt(prompt, opts);
  const events = [];
  for await (const e of run) events.push(e);
  return { events, done: await run.done };
}

/** Every file of /work, path and bytes, hashed from the page (h.fs): what is there. */
async function treeHash(h) {
  const parts = [];
  const walk = async (dir) => {
    for (const entry of (await h.fs.readdir(dir)).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const path = dir === "." ? entry.name : `${dir}/${entry.name}`;
      if (entry.type === "dir") {
        parts.push(`d:${path}`);
        await walk(path);
      } else parts.push(`f:${path}:${await sha256(await h.fs.readFile(path))}`);
    }
  };
  await walk(".");
  return { hash: await sha256(new TextEncoder().encode(parts.join("\n"))), paths: parts.length };
}

/** A plan run whose model tries every way to change /work, then the plan carried out. */
export async function hostilePlan(turns, commands) {
  const calls = [];
  const h = await boot({
    model: { api: "scripted", turns },
    shell: true,
    plan: { commands },
    tools: [
      {
        name: "save_note",
        description: "Saves a note (writes note.txt)",
        run: async (input, { fs }) => {
          calls.push("save_note");
          await fs.writeFile("note.txt", String(input.text));
          return "saved";
        },
      },
      {
        name: "lookup",
        description: "Looks a word up",
        readOnly: true,
        run: async () => {
          calls.push("lookup");
          return "found";
        },
      },
    ],
  });
  await h.fs.mkdir("src");
  await h.fs.writeFile("a.txt", "original\n");
  await h.fs.writeFile("src/app.py", "print('app')\n");
  const before = await treeHash(h);
  const planned = await everyEvent(h, "plan the change", { mode: "plan" });
  const after = await treeHash(h);
  const plan = planned.events.find((e) => e.type === "plan");
  const carried = await everyEvent(h, "carry it out", { plan: plan.text });
  const final = await h.fs.readFile("a.txt", "utf8");
  const bad = await h.prompt("x", { mode: "build" }).done.then(
    () => "resolved",
    (e) => e.code,
  );
  h.close();
  return { before, after, planned, carried, final, calls, bad, tools: h.tools.map((t) => t.name) };
}
