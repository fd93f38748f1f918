// The page code of e2e/test_enforce_attacks.py, on e2e/pages/index.html: more attacks
// on the permission rules where the effect happens. Like enforce.attack, each row boots
// one harness with the shell on, runs the attacker's tool calls one by one in one run
// (one sandbox), and reports what the page was asked, each tool result and the files
// afterwards; here the page's options are the row's, and the page can also leave an
// approval unanswered and cancel the run while it waits.

/** The page's helpers (index.html): boot with the scripted model. */
const { boot } = window;

const oneByOne = (calls) => [...calls.map((c) => ({ toolCalls: [c] })), { text: "done" }];

async function readOrNull(h, path) {
  try {
    return await h.fs.readFile(path, "utf8");
  } catch {
    return null;
  }
}

async function listAll(h, dir = ".", out = []) {
  for (const entry of await h.fs.readdir(dir)) {
    const path = dir === "." ? entry.name : `${dir}/${entry.name}`;
    out.push(path);
    if (entry.type === "dir") await listAll(h, path, out);
  }
  return out;
}

/**
 * `calls`: the model's tool calls, run one by one in one run. `deny`: every approval
 * whose subject matches this regex source is denied, anything else answered "once".
 * `seed`: files first. `check`: paths whose content is reported afterwards. `options`:
 * more of createHarness's options (readBeforeWrite, shell limits).
 */
export async function attack({ permissions, calls, deny, seed = {}, check = [], options = {}, shell = {} }) {
  const asked = [];
  const refuse = new RegExp(deny);
  const h = await boot({
    ...options,
    shell: { timeoutMs: 20_000, ...shell },
    permissions,
    onApproval: (request) => {
      asked.push({ tool: request.tool, subject: request.subject, rule: request.rule, input: request.input, diff: request.diff });
      return refuse.test(request.subject ?? "") ? { decision: "deny", message: "not that" } : "once";
    },
    model: { api: "scripted", turns: oneByOne(calls) },
  });
  for (const [path, content] of Object.entries(seed)) {
    const dir = path.split("/").slice(0, -1).join("/");
    if (dir) await h.fs.mkdir(dir, { recursive: true });
    await h.fs.writeFile(path, content);
  }
  const results = [];
  h.subscribe((e) => {
    if (e.type === "tool_end") results.push({ name: e.name, isError: e.isError, output: e.output });
  });
  const done = await h.prompt("go").done;
  const files = {};
  for (const path of check) files[path] = await readOrNull(h, path);
  const all = await listAll(h);
  h.close();
  return { asked, results, files, all, stopReason: done.stopReason };
}

/**
 * The page approves the line, then leaves every command it runs unanswered; once `asks` of them have arrived it cancels
 * the run and measures how long the run takes to end, then checks that the harness
 * still answers (h.fs, and a second run's shell command).
 */
export async function cancelWhileAsked({ permissions, command, asks = 1, seed = {} }) {
  const asked = [];
  let reached = () => {};
  const enough = new Promise((resolve) => (reached = resolve));
  const h = await boot({
    shell: { timeoutMs: 3_000 },
    permissions,
    onApproval: (request) => {
      // the line itself (the rules' first pass) and the second run are approved; each
      // command the line then runs is left waiting
      if (request.subject === command || request.subject === "echo after") return "once";
      asked.push(request.subject);
      if (asked.length >= asks) reached();
      return new Promise(() => {}); // never answered
    },
    model: {
      api: "scripted",
      turns: [
        { toolCalls: [{ name: "bash", arguments: { command } }] },
        // the cancelled run asks no more of the model: the next run takes these
        { toolCalls: [{ name: "bash", arguments: { command: "echo after" } }] },
        { text: "done again" },
      ],
    },
  });
  for (const [path, content] of Object.entries(seed)) await h.fs.writeFile(path, content);
  const outputs = [];
  h.subscribe((e) => {
    if (e.type === "tool_end") outputs.push(e.output);
  });
  const run = h.prompt("go");
  const timedOut = await Promise.race([enough.then(() => false), new Promise((r) => setTimeout(() => r(true), 30_000))]);
  const cancelledAt = performance.now();
  h.cancel();
  const done = await run.done;
  const endedMs = Math.round(performance.now() - cancelledAt);
  const fsStarted = performance.now();
  const listing = (await h.fs.readdir(".")).map((e) => e.name);
  const fsMs = Math.round(performance.now() - fsStarted);
  const again = await h.prompt("again").done;
  h.close();
  return { asked, timedOut, endedMs, fsMs, stopReason: done.stopReason, listing, outputs, againStop: again.stopReason };
}
