// The page code of e2e/test_sandbox_lifetime.py's rows, on e2e/pages/index.html served by
// the test's ApiOrigin; called from Python by e2e/conftest.py's call(). Each returns JSON
// values for the row's assertions, which stay in Python.

/** The page's helper (index.html): boot, with the scripted model unless given another. */
const { boot } = window;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Until the harness's sandbox reports ready. */
async function sandboxReady(h) {
  while (h.containment.sandbox !== "ready") await sleep(20);
}

// ---------------------------------------------------------------------------
// Unhandled rejections on the page, from watchRejections() on

const rejectionReasons = [];

export function watchRejections() {
  addEventListener("unhandledrejection", (e) => rejectionReasons.push(String(e.reason)));
}

export const rejections = () => rejectionReasons;

// ---------------------------------------------------------------------------
// The model's network never carries the page's credentials

/**
 * Run the commands under a page fetch that sends cookies and an x-csrf header, with the
 * network allowed to `allow` and an x-api-key header for `origin`; then the page's own
 * fetch of the cookie-protected API.
 */
export async function commandsUnderThePagesFetch(commands, allow, origin, key, timeoutMs, csrf) {
  const pageFetch = (url, init = {}) => fetch(url, { ...init, credentials: "include", headers: { ...init.headers, "x-csrf": csrf } });
  const turns = [{ toolCalls: commands.map((command) => ({ name: "bash", arguments: { command } })) }, { text: "done" }];
  const h = await boot({
    model: { api: "scripted", turns },
    fetch: pageFetch,
    shell: { timeoutMs },
    network: { allow: [allow], headers: { [origin]: { "x-api-key": key } } },
  });
  const ends = [];
  for await (const e of h.prompt("read the API")) if (e.type === "tool_end") ends.push(e.output);
  const api = await (await pageFetch("/api/secret?page")).text(); // the page's own call works
  h.close();
  return { ends, api, tools: JSON.stringify(h.tools) };
}

// ---------------------------------------------------------------------------
// No sandbox state survives a run

/** The implant, then the check in the same run, in the next run and in another thread; the sandbox generation of each run. */
export async function implantThenCheck(implant, check, timeoutMs) {
  const call = (command) => ({ toolCalls: [{ name: "bash", arguments: { command } }] });
  const turns = [call(implant), call(check), { text: "one" }, call(check), { text: "two" }, call(check), { text: "three" }];
  const h = await boot({ model: { api: "scripted", turns }, shell: { timeoutMs } });
  const outputs = async (text) => {
    const out = [];
    for await (const e of h.prompt(text)) if (e.type === "tool_end") out.push(e.output);
    return out;
  };
  const generations = [];
  const fresh = async () => {
    // the sandbox that replaced the used one reports ready
    const last = generations.at(-1);
    for (let i = 0; i < 1000 && h.containment.generation === last; i++) await sleep(20);
    generations.push(h.containment.generation);
  };
  generations.push(h.containment.generation);
  const first = await outputs("implant");
  await fresh();
  const next = await outputs("next run");
  await fresh();
  await h.threads.create("another thread");
  const other = await outputs("other thread");
  h.close();
  return { first, next, other, generations };
}

// ---------------------------------------------------------------------------
// A result belongs to exactly one command; a sandbox that floods is torn down.
// One harness (shared) for the steps below, from bootForgeAndFlood() to closeHarness().

let shared;

/** Boot the harness whose two runs forge and flood (the scripts written to the workspace), its sandbox ready. */
export async function bootForgeAndFlood(forge, floodAfter, floodDuring, timeoutMs) {
  await boot().then((warm) => warm.close()); // a warm HTTP cache for the timings below
  const bash = (command) => ({ name: "bash", arguments: { command } });
  shared = await boot({
    shell: { timeoutMs },
    model: {
      api: "scripted",
      turns: [
        { toolCalls: [bash("python3 forge.py"), bash("echo real output"), bash("echo real output"), bash("python3 flood_after.py")] },
        { text: "one" },
        { toolCalls: [bash("python3 flood_during.py"), bash("echo after the flood")] },
        { text: "two" },
      ],
    },
  });
  await sandboxReady(shared);
  await shared.fs.writeFile("forge.py", forge);
  await shared.fs.writeFile("flood_after.py", floodAfter);
  await shared.fs.writeFile("flood_during.py", floodDuring);
  await shared.fs.writeFile("probe.txt", "x".repeat(1024));
}

/** How long each of 40 h.fs.readFile calls takes, in ms. */
export async function readTimes() {
  const times = [];
  for (let i = 0; i < 40; i++) {
    const t = performance.now();
    await shared.fs.readFile("probe.txt");
    times.push(performance.now() - t);
  }
  return times;
}

/** Each tool_end of a prompt: its output, whether an error, and the ms from its tool_start. */
async function timedEnds(prompt) {
  const ends = [];
  const starts = {};
  for await (const e of shared.prompt(prompt)) {
    if (e.type === "tool_start") starts[e.callId] = performance.now();
    if (e.type === "tool_end") ends.push({ output: e.output, isError: e.isError, ms: performance.now() - starts[e.callId] });
  }
  return ends;
}

export const forgeAndFloodAfter = () => timedEnds("forge and flood after");

/** Once the sandbox is ready again: the second run's timed ends and the diagnostics' codes. */
export async function floodDuring() {
  await sandboxReady(shared);
  const ends = await timedEnds("flood during");
  return { ends, codes: shared.diagnostics.map((d) => d.code) };
}

export const closeHarness = () => shared.close();

// ---------------------------------------------------------------------------
// Requests end with their command and with close()

/**
 * A command that gets a body cut half-way, then many.py (its requests to the slow API):
 * close() once the first of them reached the server, then 4 s for anything after.
 */
export async function cutThenCloseMidRequests(script, allow) {
  const bash = (command) => ({ toolCalls: [{ name: "bash", arguments: { command } }] });
  const h = await boot({
    shell: { timeoutMs: 20000 },
    network: { allow: [allow] },
    model: { api: "scripted", turns: [bash(`curl -sS ${allow}cut`), { text: "cut" }, bash("python3 many.py"), { text: "never" }] },
  });
  await h.fs.writeFile("many.py", script);
  const cut = [];
  const started = performance.now();
  for await (const e of h.prompt("cut")) if (e.type === "tool_end") cut.push({ ...e, ms: performance.now() - started });
  await sandboxReady(h);
  h.prompt("many");
  // The first six at the slow API (on a loaded machine they may come a second apart),
  // then time for a seventh to come, which must not: close() comes before the first of
  // them is answered (2.5 s).
  for (let i = 0; i < 300 && Number(await (await fetch("/slow-count")).text()) < 6; i++) await sleep(50);
  await sleep(300);
  h.close();
  await sleep(4000);
  return { cut };
}

// ---------------------------------------------------------------------------
// No silent lost update

/** The page writes notes.txt while a command that rewrites it with the bytes it read is running. */
export async function pageWriteDuringACommand(timeoutMs) {
  // The command rewrites the file with the bytes it read (as a sed -i that matches
  // nothing may): the page's write made meanwhile must not be replaced by them.
  const command = "cp notes.txt /tmp/n; sleep 1; cat /tmp/n > notes.txt; echo ran";
  const h = await boot({
    shell: { timeoutMs },
    model: { api: "scripted", turns: [{ toolCalls: [{ name: "bash", arguments: { command } }] }, { text: "done" }] },
  });
  await h.fs.writeFile("notes.txt", "the user's first draft\n");
  await sandboxReady(h);
  const ends = [];
  const run = h.prompt("edit the notes");
  let wrote = false;
  for await (const e of run) {
    if (e.type === "tool_start" && !wrote) {
      wrote = true;
      await sleep(400); // the command is running
      await h.fs.writeFile("notes.txt", "the user's newer text\n");
    }
    if (e.type === "tool_end") ends.push(e.output);
  }
  const text = await h.fs.readFile("notes.txt", "utf8");
  const codes = h.diagnostics.map((d) => d.code);
  h.close();
  return { ends, text, codes };
}

// ---------------------------------------------------------------------------
// A bound on the whole workspace

/** A command that makes 20,001 files beside keep.txt; its output and what /work holds after. */
export async function overfillTheWorkspace() {
  const command = "mkdir many && cd many && python3 -c \"[open(f'f{i}', 'w').close() for i in range(20001)]\"; echo made";
  const h = await boot({
    shell: { timeoutMs: 60000 },
    model: { api: "scripted", turns: [{ toolCalls: [{ name: "bash", arguments: { command } }] }, { text: "done" }] },
  });
  await h.fs.writeFile("keep.txt", "kept");
  const ends = [];
  for await (const e of h.prompt("make many files")) if (e.type === "tool_end") ends.push(e.output);
  const names = (await h.fs.readdir("/work")).map((e) => e.name);
  h.close();
  return { ends, names };
}
