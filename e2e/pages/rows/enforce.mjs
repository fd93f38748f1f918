// The page code of e2e/test_enforce.py, on e2e/pages/index.html: the permission rules
// where the effect happens. Each row boots one harness with the shell on, runs the
// attacker's lines as `bash` calls of one run (one sandbox), and reports what the page
// was asked, what each call returned, and what /work holds afterwards.

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
 * whose subject matches this regex source (the page's onApproval) is denied, anything
 * else answered "once" (a user who approves what looks harmless). `seed`: files first.
 * `check`: paths whose content is reported afterwards. `options`, `shell`: more of
 * createHarness's options (readBeforeWrite, the shell's limits).
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
    if (e.type === "tool_end") results.push({ callId: e.callId, name: e.name, isError: e.isError, output: e.output });
  });
  const done = await h.prompt("go").done;
  const files = {};
  for (const path of check) files[path] = await readOrNull(h, path);
  const listing = await h.fs.readdir(".");
  const all = await listAll(h);
  h.close();
  return { asked, results, files, listing, all, stopReason: done.stopReason };
}
