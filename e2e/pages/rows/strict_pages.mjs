// The page code of e2e/test_strict_pages.py's rows, on e2e/pages/strict.html, which the row
// serves with the headers of a strict site (a CSP with Trusted Types, COOP and COEP) and
// whose bundle may be on another origin. Each export imports the bundle's pyharness.mjs
// from `bundle` (a URL ending in "/"), records the page's CSP violations meanwhile, and
// returns JSON values for the row's assertions, which stay in Python.

/** Every securitypolicyviolation of the page from the row's start on. */
const violations = [];
document.addEventListener("securitypolicyviolation", (e) =>
  violations.push({ directive: e.effectiveDirective, blocked: e.blockedURI, sample: e.sample, disposition: e.disposition }),
);

const tick = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const WRITE = { path: "from-write.txt", content: "written by write\n" };
const PYTHON = `python3 -c "open('from-python.txt', 'w').write('written by python3 in ' + __import__('os').getcwd())"`;

/** The scripted turn of every row that boots: a file by the write tool, one by python3 in the shell. */
const TURNS = [
  {
    toolCalls: [
      { name: "write", arguments: WRITE },
      { name: "bash", arguments: { command: PYTHON } },
    ],
  },
  { text: "both written" },
];

/** Boot from `bundle` with the shell, run the turn, read both files back. */
export async function shellTurn(bundle) {
  const { createHarness } = await import(`${bundle}pyharness.mjs`);
  const h = await createHarness({ model: { api: "scripted", turns: TURNS }, shell: true });
  const run = h.prompt("write two files");
  const ends = [];
  for await (const e of run) if (e.type === "tool_end") ends.push({ name: e.name, output: e.output, isError: e.isError });
  const files = {
    write: await h.fs.readFile(WRITE.path, "utf8"),
    python: await h.fs.readFile("from-python.txt", "utf8"),
  };
  const done = await run.done;
  // The sandbox that ran the command is replaced by a fresh one: it boots the same way.
  for (let waited = 0; h.containment.sandbox === "starting" && waited < 15000; waited += 50) await tick(50);
  const result = { done, ends, files, containment: h.containment, storage: h.storage, violations };
  h.close();
  return result;
}

/** The shell's turn (write and python3), then the widget from the same bundle, mounted
 * and sent a prompt that writes a file. */
export async function turnAndWidget(bundle) {
  const turn = await shellTurn(bundle);
  await import(`${bundle}widget.mjs`);
  const chat = document.createElement("pyharness-chat");
  chat.options = {
    workspace: "strict-widget",
    model: {
      api: "scripted",
      turns: [{ toolCalls: [{ name: "write", arguments: { path: "w.txt", content: "from the widget" } }] }, { text: "ok" }],
    },
  };
  document.body.append(chat);
  const harness = await chat.ready;
  const sent = await chat.send("write w.txt");
  const widget = { sent, file: await harness.fs.readFile("w.txt", "utf8"), crossOriginIsolated: harness.containment.crossOriginIsolated };
  chat.remove();
  return { ...turn, isolated: crossOriginIsolated, widget, violations };
}

/** Boot from `bundle` without the shell or the widget (the harness alone), run a turn
 * that writes a file, read it back. */
export async function aloneTurn(bundle) {
  const { createHarness } = await import(`${bundle}pyharness.mjs`);
  const h = await createHarness({
    model: { api: "scripted", turns: [{ toolCalls: [{ name: "write", arguments: WRITE }] }, { text: "written" }] },
  });
  const done = await h.prompt("write a file").done;
  const file = await h.fs.readFile(WRITE.path, "utf8");
  const result = { done, file, storage: h.storage, violations };
  h.close();
  return result;
}

/** Boot from `bundle` (its runtime at `baseUrl`, when given) and expect it to fail: the error's fields. */
export async function bootFailure(bundle, baseUrl) {
  const { createHarness } = await import(`${bundle}pyharness.mjs`);
  const started = performance.now();
  try {
    const h = await createHarness({ model: { api: "scripted", turns: [] }, baseUrl });
    h.close();
    return { booted: true, violations };
  } catch (err) {
    await tick(100); // the browser tells a violation in a task of its own, after the throw
    return {
      name: err.name,
      code: err.code,
      step: err.step,
      message: err.message,
      ms: Math.round(performance.now() - started),
      violations,
    };
  }
}

/**
 * Boot with the shell on a page whose CSP refuses the sandbox frame's script: how long
 * until h.containment.sandbox is "failed" (from the boot's end), and a bash call then.
 */
export async function sandboxRefused(bundle) {
  const { createHarness } = await import(`${bundle}pyharness.mjs`);
  const turns = [{ toolCalls: [{ name: "bash", arguments: { command: "echo hi" } }] }, { text: "after" }];
  const h = await createHarness({ model: { api: "scripted", turns }, shell: true });
  const booted = performance.now();
  while (h.containment.sandbox === "starting" && performance.now() - booted < 20000) await tick(50);
  const failedMs = Math.round(performance.now() - booted);
  const containment = { ...h.containment };
  const started = performance.now();
  const run = h.prompt("run it");
  const ends = [];
  for await (const e of run) if (e.type === "tool_end") ends.push({ output: e.output, isError: e.isError });
  const result = { failedMs, containment, ends, callMs: Math.round(performance.now() - started), done: await run.done };
  h.close();
  return result;
}
