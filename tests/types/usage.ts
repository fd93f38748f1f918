// Compiled by `tsc -p tests/types` (make typecheck), never run: every public type is
// used the way the docs show, and each @ts-expect-error line must stay an error.
import {
  createHarness,
  HarnessError,
  type EventOf,
  type Harness,
  type HarnessOptions,
  type PageTool,
  type PyharnessEvent,
  type RunResult,
  type PathDiff,
  type RevertResult,
  type CheckpointInfo,
  type RewindResult,
  type UsageInfo,
} from "@pyharness/embed";
import { PyharnessChat, type PyharnessChatOptions } from "@pyharness/embed/widget";

export async function api(): Promise<void> {
  const saveNote: PageTool = {
    name: "save_note",
    description: "Save a note",
    parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    timeoutMs: 10_000,
    run: async (input: { text: string }, { signal, fs }) => {
      signal.throwIfAborted();
      await fs.writeFile("note.txt", input.text);
      return { saved: input.text.length };
    },
  };
  const options: HarnessOptions = {
    model: { api: "openai-chat", baseUrl: "http://localhost:11434/v1", model: "qwen2.5-coder", apiKey: "k", maxRetries: 2 },
    systemPrompt: "Be brief.",
    maxSteps: 20,
    instructionFiles: ["NOTES.md"], // generated from HarnessConfig (embed/shared/options.d.ts)
    skills: [{ name: "style", description: "House style.", content: "Be terse." }],
    builtinTools: ["read", "write", "ls"],
    tools: [saveNote],
    shell: { timeoutMs: 5000, maxOutput: 10_000 },
    fetch: (url, init) => fetch(url, init),
    baseUrl: new URL("/pyharness/", location.href),
    onProgress: (p) => console.log(p.step, p.state, p.ms, p.bytes ?? 0),
    network: { allow: ["https://api.example.com/data/"], methods: ["GET"], maxResponseBytes: 1_000_000 },
    onDiagnostic: (d) => console.warn(d.code, d.message, d.at),
    permissions: { read: "allow", write: { "*": "ask", "docs/**": "allow" }, bash: { "*": "ask", "git push *": "deny" } },
    onApproval: async (request, { signal }) =>
      signal.aborted || request.tool === "bash" ? { decision: "deny", message: "not now" } : "once",
    approvalTimeoutMs: 60_000,
    readBeforeWrite: true,
    checkpoints: true,
  };
  const h: Harness = await createHarness(options);
  await createHarness({ model: { api: "anthropic-messages", model: "claude-sonnet-4-5", thinkingBudget: 2048,
                                 secretHeaders: { "x-gateway-token": "t" } } });
  const sandbox: "off" | "starting" | "ready" | "failed" | "closed" = h.containment.sandbox;
  console.log(sandbox, h.containment.secretsOnPage, h.containment.workerCsp, h.containment.crossOriginIsolated, h.diagnostics.length);
  // @ts-expect-error network needs an allow-list
  await createHarness({ model: { api: "scripted", turns: [] }, network: { methods: ["GET"] } });
  await createHarness({ model: { api: "scripted", turns: [{ text: "hi", toolCalls: [{ name: "ls", arguments: {} }], delayMs: 5 }] } });
  await createHarness({
    model: { api: "openai-chat", model: "gpt-4.1", prices: { input: 2, output: 8, cacheRead: 0.5 } },
    budget: { harness: { cost: 1.5 } },
  });

  const text: string = await h.fs.readFile("a.txt", "utf8");
  const same: string = await h.fs.readFile("a.txt", { encoding: "utf8" });
  const bytes: Uint8Array = await h.fs.readFile("a.txt");
  await h.fs.writeFile("b.bin", bytes, { append: true });
  await h.fs.writeFile("c.txt", text + same);
  for (const entry of await h.fs.readdir(".")) {
    const kind: "file" | "dir" | "symlink" | "other" = entry.type;
    console.log(entry.name, kind);
  }
  const { size, mtime, mode } = await h.fs.stat("a.txt");
  console.log(size + mtime + mode);
  await h.fs.mkdir("d/e", { recursive: true });
  await h.fs.rm("d", { recursive: true, force: true });
  await h.fs.rename("a.txt", "z.txt");

  const controller = new AbortController();
  const run = h.prompt("Fix the test", { signal: controller.signal });
  for await (const event of run) {
    if (event.type === "text_delta") console.log(event.delta);
    if (event.type === "tool_end") console.log(event.callId, event.output, event.isError);
    if (event.type === "run_end") console.log(event.stopReason, event.usage?.inputTokens);
  }
  const result: RunResult = await run.done;
  if (result.stopReason === "error") console.log(result.error?.code, result.error?.message);
  // permissions' events, checkpoints and undo
  h.subscribe((e) => {
    if (e.type === "approval_request") console.log(e.callId, e.tool, e.rule, e.diff);
    if (e.type === "approval_result") console.log(e.decision, e.by);
  });
  const diffs: PathDiff[] = await run.diff();
  for (const d of diffs) console.log(d.path, d.kind, d.sizeBefore, d.diff ?? "");
  const dry: RevertResult = await h.revert(run.id, { dryRun: true });
  const undone: RevertResult = await run.revert({ cascade: true });
  if (undone.revertId !== null) await h.revert(undone.revertId); // redo
  console.log(dry.changes.length, (await h.checkpoints()).map((c: CheckpointInfo) => c.runId));
  // plan mode
  const planned = h.prompt("plan it", { mode: "plan" });
  for await (const e of planned) if (e.type === "plan") await h.prompt("go", { plan: e.text }).done;
  // @ts-expect-error a run is a plan run or a normal one
  h.prompt("x", { mode: "build" });
  await createHarness({ model: { api: "scripted", turns: [] }, subagents: { maxConcurrent: 2, budget: { requests: 10 } } });
  h.subscribe((e) => {
    if (e.type !== "file_change" && e.parentRunId !== undefined) console.log(e.parentRunId, e.parentCallId, e.depth);
  });
  await createHarness({ model: { api: "scripted", turns: [] }, plan: { commands: ["ls *"] },
                        tools: [{ name: "look", readOnly: true, run: () => "seen" }] });
  // usage and budgets
  const used: UsageInfo = await h.setBudget({ run: { requests: 30, timeMs: 300_000 }, thread: { tokens: 2_000_000 } });
  console.log(used.harness.inputTokens, used.thread.cost ?? "no prices", used.budget?.thread?.tokens);
  const ended: RunResult = await h.prompt("go").done;
  if (ended.stopReason === "budget" && ended.budget) console.log(ended.budget.scope, ended.budget.limit, ended.budget.used);
  console.log(ended.usage?.requests, (await h.usage()).threadId, (await h.threads.list()).threads[0]?.usage.toolCalls);
  await h.setBudget(null);
  // @ts-expect-error a budget scope takes known limits only
  await h.setBudget({ run: { dollars: 1 } });
  const rewound: RewindResult = await h.threads.rewind(run.id);
  console.log(rewound.rewound, rewound.removedMessages);
  const unsubscribe = h.subscribe((e: PyharnessEvent) => console.log(e.runId, e.seq));
  unsubscribe();
  const end: EventOf<"tool_start"> | undefined = undefined;
  console.log(end, h.tools.map((t) => t.name), h.versions.pyodide);
  h.cancel();
  run.cancel();
  h.close();

  try {
    await h.fs.readFile("nope");
  } catch (err) {
    if (err instanceof HarnessError) console.log(err.code, err.step);
  }

  // @ts-expect-error: the model is required
  await createHarness({});
  // @ts-expect-error: no such wire API
  await createHarness({ model: { api: "gpt", model: "x" } });
  // @ts-expect-error: only utf8 is an encoding
  await h.fs.readFile("a.txt", "latin1");
  // @ts-expect-error: not a built-in tool
  await createHarness({ model: { api: "scripted", turns: [] }, builtinTools: ["rm"] });
}

export async function widget(): Promise<void> {
  const chat = document.createElement("pyharness-chat");
  const typed: PyharnessChat = chat;
  const fromQuery = document.querySelector("pyharness-chat");
  fromQuery?.setAttribute("api", "openai-chat");
  const options: PyharnessChatOptions = {
    model: { apiKey: "sk-…" },
    tools: [],
    shell: true,
    fetch: (url, init) => fetch(url, init),
  };
  typed.options = options;
  typed.options = { model: { api: "scripted", turns: [{ text: "hi" }] } };
  typed.options = { model: { secretHeaders: { "x-token": "t" }, contextWindow: 8192 }, checkpoints: false };
  // @ts-expect-error: no such wire API
  typed.options = { model: { api: "gpt" } };
  // @ts-expect-error: a skill needs its content
  typed.options = { skills: [{ name: "s", description: "d" }] };
  typed.suggestions = ["Write a FizzBuzz script and run it"];
  chat.addEventListener("pyharness-ready", (e) => {
    void e.detail.harness.fs.writeFile("seed.txt", "x").then(() => chat.refreshFiles());
  });
  chat.addEventListener("pyharness-event", (e) => console.log(e.detail.type, e.detail.seq));
  chat.addEventListener("pyharness-run-end", (e) => console.log(e.detail.stopReason));
  chat.addEventListener("pyharness-boot-error", (e) => console.log(e.detail.error.message));
  chat.addEventListener("click", (e: MouseEvent) => console.log(e.button));
  const h: Harness = await chat.ready;
  const result: RunResult = await chat.send("hello");
  console.log(h.tools.length, result.text, chat.running, chat.harness?.versions);
  chat.cancel();
  await chat.restart();
  // @ts-expect-error: detail of pyharness-ready has no text
  chat.addEventListener("pyharness-ready", (e) => console.log(e.detail.text));
  // @ts-expect-error: the options property has no such field
  chat.options = { apiKey: "k" };
}
