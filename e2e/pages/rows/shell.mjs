// The page code of e2e/test_shell.py's rows, one export per row, on e2e/pages/index.html;
// called from Python by e2e/conftest.py's call(). Each returns JSON values for the row's
// assertions, which stay in Python.

/** The page's helpers (index.html): boot with the scripted model, settle a promise into {ok, ...}. */
const { boot, settle } = window;

/** Run the scripted turns over a seeded seed.json with this shell option; the tool_end events and what the shell left. */
export async function shellTurn(turns, shell) {
  const steps = [];
  const h = await boot({ model: { api: "scripted", turns }, shell, onProgress: (p) => steps.push(p.step) });
  await h.fs.writeFile("seed.json", JSON.stringify({ items: [{ n: 1 }, { n: 2 }, { n: 39 }] }));
  const run = h.prompt("exercise the shell");
  const ends = [];
  for await (const e of run) if (e.type === "tool_end") ends.push(e);
  const result = await h.fs.readFile("out/result.txt", "utf8").catch((e) => e.message);
  const tools = h.tools;
  const containment = h.containment;
  h.close();
  return { ends, result, tools, steps, containment, done: await run.done };
}

/** Without the shell option, the model calls bash anyway. */
export async function shellOff() {
  const h = await boot({
    model: { api: "scripted", turns: [{ toolCalls: [{ name: "bash", arguments: { command: "ls" } }] }, { text: "ok" }] },
  });
  const ends = [];
  for await (const e of h.prompt("try")) if (e.type === "tool_end") ends.push(e);
  const tools = h.tools.map((t) => t.name);
  const containment = h.containment;
  h.close();
  return { ends, tools, containment };
}

/** The shell named "sh" runs `sleep 30`, cancelled 300 ms after it starts; then another prompt. */
export async function renamedAndCancelled() {
  const h = await boot({
    shell: { name: "sh", timeoutMs: 60000 },
    model: { api: "scripted", turns: [{ toolCalls: [{ name: "sh", arguments: { command: "sleep 30" } }] }, { text: "after" }] },
  });
  const run = h.prompt("sleep");
  for await (const e of run) if (e.type === "tool_start") setTimeout(() => h.cancel(), 300);
  const first = await run.done;
  const ends = [];
  const second = h.prompt("again");
  for await (const e of second) ends.push(e.type);
  const names = h.tools.map((t) => t.name);
  h.close();
  return { first, second: await second.done, names };
}

/** One prompt to this model with shell: true; the result and the n.txt it wrote. */
export async function promptWithTheShell(model) {
  const h = await boot({ model, shell: true });
  const done = await h.prompt("compute").done;
  const n = await h.fs.readFile("n.txt", "utf8");
  h.close();
  return { done, n };
}

/** Boot with maxOutputBytes 4096, run these commands in one turn (after `before(h)`),
 * and give the tool_end events and the harness (to look at what was left). */
async function commandsUnder4096(commands, before = async () => {}) {
  const turns = [{ toolCalls: commands.map((command) => ({ name: "bash", arguments: { command } })) }, { text: "done" }];
  const h = await boot({ shell: { maxOutputBytes: 4096 }, model: { api: "scripted", turns } });
  await before(h);
  const ends = [];
  for await (const e of h.prompt("write")) if (e.type === "tool_end") ends.push(e);
  return { h, ends };
}

/** Under maxOutputBytes 4096: a big output, a 10,000-byte copy, a small write. */
export async function maxOutputBytes() {
  const { h, ends } = await commandsUnder4096(
    ["for i in $(seq 1 1000); do echo line-$i; done > big.txt", "cp seed.bin copy.bin", "echo small > ok.txt && cat ok.txt"],
    (harness) => harness.fs.writeFile("seed.bin", new Uint8Array(10000)),
  );
  const copy = await settle(h.fs.stat("copy.bin"));
  h.close();
  return { ends, copy };
}

/** Under maxOutputBytes 4096: /dev/null, then python3 writing 100,000 bytes and 1,000 bytes. */
export async function devNullAndPythonWrites() {
  const { h, ends } = await commandsUnder4096([
    "ls nope 2>/dev/null; echo hidden > /dev/null; echo visible; cat /dev/null | wc -c",
    "python3 -c \"open('big.bin', 'wb').write(b'x' * 100_000)\" && echo small > kept.txt",
    "python3 -c \"open('fits.txt', 'w').write('y' * 1000)\"",
  ]);
  const big = await settle(h.fs.stat("big.bin"));
  const kept = await settle(h.fs.stat("kept.txt"));
  const fits = await settle(h.fs.stat("fits.txt"));
  h.close();
  return { ends, big, kept, fits };
}
