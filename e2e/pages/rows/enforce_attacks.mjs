// The page code of e2e/test_enforce_attacks.py, on e2e/pages/index.html: more attacks
// on the permission rules where the effect happens. Most rows use enforce.attack (one
// harness with the shell on, the attacker's tool calls run one by one in one run, what
// the page was asked, each tool result and the files afterwards); cancelWhileAsked
// leaves an approval unanswered and cancels the run while it waits.

/** The page's helpers (index.html): boot with the scripted model. */
const { boot } = window;

// The same attack runner as e2e/test_enforce.py's.
export { attack } from "./enforce.mjs";

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
