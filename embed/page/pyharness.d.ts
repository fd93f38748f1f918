// Public API of pyharness (hand-kept; the event types are generated into events.d.ts,
// the JSON-safe options into options.d.ts from harness/config.py).
import type { BudgetLimit, PyharnessEvent, Totals } from "../shared/events.d.ts";
import type {
  Budget,
  GitConfig,
  HarnessConfig,
  NetworkPolicy,
  PackagesPolicy,
  Prices,
  ScriptedTurn,
  ShellConfig,
} from "../shared/options.d.ts";

/** A scripted turn: the model "says" `text` and then calls `toolCalls` (generated). */
export type { Budget, BudgetLimits, GitAuthor, HarnessConfig, PageSkill, Prices, ScriptedTurn } from "../shared/options.d.ts";

export type { BudgetLimit, PyharnessEvent, EventOf, Totals, Usage } from "../shared/events.d.ts";


/** Options shared by the HTTP providers. */
export interface ProviderOptions {
  /** Server root, e.g. "https://api.openai.com/v1" or "http://localhost:11434/v1". */
  baseUrl?: string;
  /** Kept on the page: added by the page to the model's requests only; never sent to the worker. */
  apiKey?: string;
  /** More headers kept on the page like `apiKey` (e.g. a gateway token). */
  secretHeaders?: Record<string, string>;
  /** The provider's model name. */
  model: string;
  /** Extra request headers (visible to the worker; use `secretHeaders` for secrets). */
  headers?: Record<string, string>;
  maxTokens?: number;
  temperature?: number;
  /** Retries of 429/5xx/529 and connection failures before anything streamed (default 3). */
  maxRetries?: number;
  /** A stream that sends nothing for this long fails (default 60000). */
  idleTimeoutMs?: number;
  /** Tokens the model takes in (default by model name); the history is compacted to fit. */
  contextWindow?: number;
  /** The model takes images (attachments, `read` of an image file); default by model
   * name (gpt-4o, gpt-4.1, gpt-5, o3, o4, claude-, gemini, …). Without it `read`
   * describes an image (type, size, dimensions) instead. */
  vision?: boolean;
  /** USD per million tokens, for usage's cost and `budget.cost`; none: cost is null. */
  prices?: Prices;
}

/** The model, chosen by wire API. Each request of a scripted model consumes the next turn. */
export type ModelOptions =
  | { api: "scripted"; turns: ScriptedTurn[]; contextWindow?: number; vision?: boolean; prices?: Prices }
  | ({ api: "openai-chat" } & ProviderOptions)
  | ({ api: "anthropic-messages"; thinkingBudget?: number } & ProviderOptions);

/** A tool the page defines; `run` runs on the page. */
export interface PageTool {
  name: string;
  /** The tool changes nothing: a plan run offers it (default false: not offered while planning). */
  readOnly?: boolean;
  description?: string;
  /** JSON Schema of the input; checked before `run` is called. */
  parameters?: Record<string, unknown>;
  /** A call not answered by then is an error result and its signal aborts (default 60000). */
  timeoutMs?: number;
  /** Return a string or any JSON-serialisable value; a throw is an error result. */
  run(input: any, ctx: { signal: AbortSignal; fs: HarnessFs }): unknown | Promise<unknown>;
}

/** A built-in tool's name (generated from harness/config.py BUILTIN_TOOL_NAMES). */
export type BuiltinToolName = NonNullable<HarnessConfig["builtinTools"]>[number];

/** The shell's limits (generated from harness/config.py ShellConfig). */
export type ShellOptions = ShellConfig;

/** What the model's code may fetch (shell only), through the page. */
export interface NetworkOptions extends NetworkPolicy {
  /** Headers the page adds to the model's requests to one allowed origin, e.g.
   * {"https://api.example.com": {"x-api-key": "..."}}. The values stay on the page: the
   * worker and the model never see them. Nothing else of the page's goes out (no
   * cookies, no referrer, not the `fetch` option). */
  headers?: Record<string, Record<string, string>>;
}

/** Package indexes `pip` in the sandbox may use besides the bundle's own (built with
 * `pyharness build --package ...`). Their downloads go through the page like `network`'s
 * (no cookies, no referrer, read only: GET and HEAD, at most 64 MiB a response). */
export interface PackagesOptions extends PackagesPolicy {
  /** PyPI-compatible indexes (PEP 503/691 simple API, or the JSON API with a
   * `{package_name}` placeholder) that send CORS headers; at most 10. The wheels must be
   * on the same origins. */
  indexUrls: string[];
}

/** A file attached to a prompt: written to /work/attachments/<name> (made unique) and
 * named in the prompt; an image (PNG, JPEG, GIF, WebP, at most 5 MiB) also goes to the
 * model as an image when it takes images (`model.vision`). Other types: text/*,
 * application/pdf, application/json, application/zip, application/xml,
 * application/octet-stream (at most 20 MiB); at most 10 a prompt, 25 MiB together. An
 * attachment that breaks a rule fails the run (EINVAL, EFBIG) before anything is sent. */
export interface Attachment {
  name: string;
  /** Its MIME type (default: the Blob's). */
  type?: string;
  data: Blob | ArrayBuffer | ArrayBufferView | string;
}

export interface PromptOptions {
  signal?: AbortSignal;
  attachments?: Attachment[];
  /** "plan": a plan run: read-only tools, nothing in /work can change, and its answer
   * comes as a `plan` event for the page to review. */
  mode?: "plan";
  /** An approved plan this run carries out (given to the model with the prompt). */
  plan?: string;
}

/** One MCP server (Streamable HTTP), for `createHarness({mcp: [...]})`. */
export interface McpServerOptions {
  /** Letters, digits, - and _ (at most 31, no "__"): the prefix of its tools' names. */
  name: string;
  /** Its Streamable HTTP endpoint, e.g. "https://mcp.example.com/mcp"; another origin
   * must allow CORS (and expose `mcp-session-id`). */
  url: string;
  /** Headers added to its requests. */
  headers?: Record<string, string>;
  /** Headers added to its requests that are secrets (a token): like `headers`, they stay
   * on the page; the worker and the model never see them. */
  secretHeaders?: Record<string, string>;
  /** Only these of its tools (by the server's names); default: all (at most 100). */
  tools?: string[];
  /** A call's deadline (default 60,000 ms). */
  timeoutMs?: number;
}

/** An MCP server as connected at boot. */
export interface McpServerStatus {
  name: string;
  url: string;
  status: "connected" | "failed";
  /** Its tools as the model sees them (`<name>__<tool>`). */
  tools: string[];
  /** Why it failed (a connect error, "no answer within 5000 ms", …). */
  error?: string;
  /** Its tools that were left out, and why (a name listed twice or colliding with
   * another tool's once made a tool name, an input schema too deep, too large or not a
   * schema, a secret header's value in a name); each also gives an `mcp_unavailable`
   * diagnostic. */
  leftOut?: { tool: string; why: string }[];
}

/** What is in force on this page, measured by the sandbox and the worker at boot. */
export interface Containment {
  sandbox: "off" | "starting" | "ready" | "failed" | "closed";
  /** The sandbox's origin is "null". */
  opaqueOrigin?: boolean;
  /** The sandbox's fetch of the bundle was refused. */
  networkBlocked?: boolean;
  /** IndexedDB, Cache Storage and OPFS refused the sandbox. */
  storageBlocked?: boolean;
  /** eval refused in the sandbox. */
  evalBlocked?: boolean;
  /** The model's credentials never leave the page (always true). */
  secretsOnPage: boolean;
  /** The harness worker has its own CSP (the response header of worker.mjs). */
  workerCsp: boolean;
  /** The page is cross-origin isolated (COOP/COEP: SharedArrayBuffer), as at createHarness. */
  crossOriginIsolated: boolean;
  /** The network option's allow-list and the package indexes ([] when the model's code has no network). */
  agentNetwork?: string[];
  bootMs?: number;
  generation?: number;
  /** Why the sandbox failed. */
  error?: string;
}

/** Where the workspace lives, as opened at boot. */
export interface StorageInfo {
  kind: "opfs" | "memory";
  workspace: string;
  /** Files restored from OPFS at boot. */
  restoredFiles: number;
  /** Why it is "memory" when OPFS was asked for implicitly. */
  reason?: string;
  /** Another tab took the workspace over (createHarness({takeOver: true})): this harness
   * saved what it had, let go and closed (its calls reject with EBUSY). */
  takenOver?: boolean;
  /** Set while changes cannot be written to OPFS (storage full: "ENOSPC"; refused:
   * "EIO"). They stay in the session and are retried at every later save; calls that
   * change files reject with this code until a save succeeds, and it is cleared then. */
  error?: { code: "ENOSPC" | "EIO"; message: string };
}

export interface ThreadInfo {
  id: string;
  title: string;
  /** Seconds since the epoch. */
  created: number;
  updated: number;
  /** Messages in its history. */
  messages: number;
  /** What its runs used, ever (a rewind takes back files, not spending). */
  usage: Totals;
}

/** h.usage() and h.setBudget(): what was used, and the budget in force. */
export interface UsageInfo {
  /** Since createHarness. */
  harness: Totals;
  /** The current thread's, ever (kept with it). */
  thread: Totals;
  threadId: string;
  budget: Budget | null;
}

export interface Threads {
  list(): Promise<{ current: string; threads: ThreadInfo[] }>;
  create(title?: string): Promise<ThreadInfo>;
  switch(id: string): Promise<ThreadInfo>;
  rename(id: string, title: string): Promise<ThreadInfo>;
  delete(id: string): Promise<ThreadInfo>;
  /** The run events of a thread (text deltas merged), to redraw it; a cut-off run ends with run_end {interrupted: true}. */
  transcript(id?: string): Promise<{ thread: ThreadInfo; events: Array<PyharnessEvent & { interrupted?: boolean }> }>;
  /** Revert run `runId` and every later run of the current thread, and cut the thread back
   * to just before that run's prompt (all or nothing: ECONFLICT, EBUSY, ENOENT). */
  rewind(runId: string): Promise<RewindResult>;
}

export interface RewindResult extends RevertResult {
  /** The runs cut from the thread, oldest first. */
  rewound: string[];
  /** Messages removed from the history the model sees. */
  removedMessages: number;
}

export interface WorkspaceInfo {
  name: string;
  /** A harness (in this or another tab) has it open. */
  open: boolean;
}

/** A message from the worker that the page dropped. */
export interface Diagnostic {
  code: string;
  message: string;
  /** Date.now() when it was dropped. */
  at: number;
}

export interface ToolInfo {
  name: string;
  description: string;
  /** JSON Schema of the arguments. */
  parameters: Record<string, unknown>;
}

export interface BootProgress {
  /** "manifest" | "runtime" | "packages" | "storage" | "harness" */
  step: string;
  state: "start" | "done";
  /** Milliseconds since the worker began booting. */
  ms: number;
  /** Bytes this step downloads, when known. */
  bytes?: number;
}

/** The options of createHarness: the JSON-safe ones generated from harness/config.py
 * (HarnessConfig: systemPrompt, maxSteps, instructions, instructionFiles, skills,
 * approvalTimeoutMs, readBeforeWrite, checkpoints, …), and the page's own. */
/** The shell's git: who it commits as, and the credentials for its remotes. */
export interface GitOptions extends GitConfig {
  /** Credentials for a remote's smart-HTTP requests (`git clone/fetch/pull/push` of a
   * URL `network.allow` allows): called on the page for each such request, its answer
   * added there (Basic auth from `{username, password}`, or `{headers}`); it never
   * reaches the worker, the sandbox or the model. A response that holds them is refused. */
  auth?: (url: string) => GitCredentials | null | Promise<GitCredentials | null>;
}

/** h.git(): the branch (null when detached), HEAD's short id (null before the first
 * commit), and how many files `git status --short` would list. */
export interface GitSummary {
  branch: string | null;
  head: string | null;
  changes: number;
}

export type GitCredentials = { username: string; password: string } | { headers: Record<string, string> };

export interface HarnessOptions
  extends Omit<HarnessConfig, "model" | "pageTools" | "shell" | "network" | "packages" | "permissions" | "git"> {
  model: ModelOptions;
  /** The page's own tools; one named like a built-in (or the shell) replaces it. */
  tools?: PageTool[];
  /** The function the page makes the model's requests with (default window.fetch). Only
   * for the endpoints the page configured (the model's); never for a URL the model's
   * code asks for (`network` uses the platform's fetch without the page's credentials). */
  fetch?: (url: string, init: RequestInit) => Promise<Response>;
  /** The shell tool (just-bash + python3 over /work, in the sandbox): off by default. */
  shell?: boolean | ShellOptions;
  /** What the model's code may fetch (shell only); no network when absent. */
  network?: NetworkOptions;
  /** Package indexes for `pip` in the sandbox (shell only); only the bundle's own when absent. */
  packages?: PackagesOptions;
  /** The shell's git: `{author: {name, email}, auth?: (url) => credentials}`. */
  git?: GitOptions;
  /** MCP servers whose tools the model gets, as `<name>__<tool>` page tools. Reached from
   * the page (with the `fetch` option), never from the worker; at boot each has 5 s to
   * connect and list its tools, or the harness boots without it (`h.mcp`, a diagnostic). */
  mcp?: McpServerOptions[];
  /** Called for each message from the worker that the page dropped. */
  onDiagnostic?: (diagnostic: Diagnostic) => void;
  /** Aborting it during the boot terminates the worker; createHarness rejects with ECANCELED. */
  signal?: AbortSignal;
  /** Where /work lives: "opfs" (kept across reloads), "memory", or "auto" (default: OPFS where the browser has it). */
  storage?: "auto" | "opfs" | "memory";
  /** The workspace's name (default: "page:" + the page's path). One harness at a time may open it. */
  workspace?: string;
  /** When the workspace is open in another tab: ask that tab for it (it saves, lets go,
   * and its harness closes with EBUSY) instead of failing or keeping files in memory. */
  takeOver?: boolean;
  /** Where the bundle lives (default: the directory of pyharness.mjs). On another origin
   * than the page's it must be served with Access-Control-Allow-Origin: the worker then
   * starts from a same-origin blob: module that imports its worker.mjs (docs/embedding.md,
   * "Hosting on a strict site"). */
  baseUrl?: string | URL;
  /** Called for each boot step as it starts and ends. */
  onProgress?: (progress: BootProgress) => void;
  /** Permission rules per tool (built-in, the shell by its name, page tools): an action,
   * or glob patterns → actions matched against the call's path (relative to /work) or
   * command line; the longest matching pattern wins. A tool without a rule is allowed.
   * Unknown tools or malformed rules fail the boot. See docs/embedding.md, Permissions. */
  permissions?: Partial<Record<BuiltinToolName | string, PermissionRule>>;
  /** Asked when a rule says "ask". Resolve with "once", "always" (this harness's life,
   * for that tool and pattern) or "deny", or {decision, message} (a message for the
   * model). A throw, another answer, a timeout, a cancelled run, close() or no
   * onApproval at all is a deny. `signal` aborts when the answer is no longer wanted. */
  onApproval?: (request: ApprovalRequest, opts: { signal: AbortSignal }) => ApprovalAnswer | Promise<ApprovalAnswer>;
}

/** What onApproval is asked (the approval_request event says the same in the run). */
export interface ApprovalRequest {
  runId: string;
  callId: string;
  tool: string;
  /** The call's arguments, as the model sent them. */
  input: Record<string, unknown>;
  /** The rule that asked, e.g. 'bash: "*"'. */
  rule: string;
  /** What it matched: the path relative to /work, or the command line. */
  subject: string | null;
  /** For write and edit: the unified diff the call would apply. */
  diff: string | null;
}

export type PermissionAction = "allow" | "ask" | "deny";
export type PermissionRule = PermissionAction | Record<string, PermissionAction>;
export type ApprovalDecision = "once" | "always" | "deny";
export type ApprovalAnswer = ApprovalDecision | { decision: ApprovalDecision; message?: string };

/** Errors carry a POSIX-style code: ENOENT, EEXIST, ENOTDIR, EISDIR, ENOTEMPTY, EINVAL,
 * EACCES (outside the workspace), EPERM, ENAMETOOLONG, EIO, ENOSPC; ECANCELED after close(); EBOOT at boot;
 * EBUSY once another tab took the workspace over. */
export declare class HarnessError extends Error {
  constructor(code: string, message: string, step?: string);
  code: string;
  /** For EBOOT: the boot step that failed. */
  step?: string;
}

export interface DirEntry {
  name: string;
  type: "file" | "dir" | "symlink" | "other";
}

export interface Stat {
  type: "file" | "dir" | "symlink" | "other";
  size: number;
  /** Modification time, milliseconds since the epoch. */
  mtime: number;
  /** Permission bits (e.g. 0o644). */
  mode: number;
}

/** The worker's filesystem. Paths are relative to /work or absolute under /work. */
export interface HarnessFs {
  readFile(path: string): Promise<Uint8Array>;
  readFile(path: string, opts: { encoding: "utf8" | "utf-8" } | "utf8" | "utf-8"): Promise<string>;
  writeFile(path: string, data: string | ArrayBuffer | ArrayBufferView, opts?: { append?: boolean }): Promise<void>;
  readdir(path: string): Promise<DirEntry[]>;
  stat(path: string): Promise<Stat>;
  mkdir(path: string, opts?: { recursive?: boolean }): Promise<void>;
  rm(path: string, opts?: { recursive?: boolean; force?: boolean }): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  /** The whole workspace as a zip archive. */
  exportZip(): Promise<Uint8Array>;
  /** Unpack a zip archive into /work (replace: empty /work first); entries are checked first. */
  importZip(data: ArrayBuffer | ArrayBufferView, opts?: { replace?: boolean }): Promise<{ files: number; dirs: number }>;
}

export interface RunResult {
  text: string;
  stopReason: "stop" | "max_steps" | "aborted" | "error" | "budget";
  /** What the run used (absent only for a run the page saw end without its run_end). */
  usage?: Totals;
  /** Set when stopReason is "budget": the limit that stopped the run. */
  budget?: BudgetLimit;
  /** Set when stopReason is "error". */
  error?: { code: string; message: string };
}

export interface Run extends AsyncIterable<PyharnessEvent> {
  readonly id: string;
  /** Resolves when the run ends (whatever the stop reason); rejects only if the harness closes. */
  readonly done: Promise<RunResult>;
  cancel(): void;
  /** h.revert(run.id, opts) */
  revert(opts?: RevertOptions): Promise<RevertResult>;
  /** h.diff(run.id) */
  diff(): Promise<PathDiff[]>;
}

export interface RevertOptions {
  /** Say what the revert would change, and change nothing. */
  dryRun?: boolean;
  /** Revert the later runs that changed the same paths first (newest first). */
  cascade?: boolean;
  /** Revert even over what the page (or an unknown cause) changed since the run touched
   * a path: what it overwrites comes back by reverting this revert. */
  force?: boolean;
}

/** One path a revert changes (or would change, for a dry run). */
export interface RevertChange {
  path: string;
  /** What the revert does to it: "created" (it comes back), "deleted", "modified", "mode_changed". */
  kind: "created" | "deleted" | "modified" | "mode_changed";
  sizeBefore: number | null;
  sizeAfter: number | null;
}

export interface RevertResult {
  /** The revert's own id: h.revert(revertId) redoes what it took back. Null for a dry run. */
  revertId: string | null;
  /** The runs taken back, newest first. */
  reverted: string[];
  changes: RevertChange[];
}

/** What one run changed in one path. */
export interface PathDiff {
  path: string;
  kind: "created" | "deleted" | "modified" | "mode_changed";
  entry: "file" | "dir";
  sizeBefore: number | null;
  sizeAfter: number | null;
  /** The path changed again after the run (a revert would be refused: ECONFLICT). */
  changedSince: boolean;
  /** A unified diff, for text files still as the run left them; null otherwise. */
  diff: string | null;
}

export interface PreviewOptions {
  /** The site's folder in /work (default "/"). */
  root?: string;
  /** The page shown first, in the root (default "index.html"). */
  entry?: string;
}

/** One line of a preview load's console. */
export interface PreviewEntry {
  level: "error" | "warn" | "log";
  text: string;
}

/** A live, contained preview of a folder of /work (h.preview). */
export interface Preview {
  /** Mount it where it should show; the site's frame fills it. */
  readonly element: HTMLElement;
  /** The site's frame now (replaced at each load; null once closed). */
  readonly iframe: HTMLIFrameElement | null;
  readonly root: string;
  /** The site's page shown now, e.g. "/index.html". */
  readonly entry: string;
  readonly state: "loading" | "loaded" | "failed" | "closed";
  /** This load's console (errors, warnings, log lines; at most 200). */
  readonly entries: PreviewEntry[];
  /** Loads so far. */
  readonly loads: number;
  /** Told at each change of state and each console entry; returns the unsubscribe. */
  subscribe(listener: (preview: Preview) => void): () => void;
  /** Load again from scratch (or another page of the site). */
  reload(entry?: string): void;
  /** Remove it, and everything running in it. */
  close(): void;
}

export interface CheckpointInfo {
  runId: string;
  /** The revert that took it back, if any. */
  revertedBy: string | null;
  /** For a revert: the runs it took back. */
  reverts: string[];
  paths: number;
  bytes: number;
  /** A subagent's checkpoint: the run it ran in (whose checkpoint holds its changes too). */
  parentRunId: string | null;
}

export interface Harness {
  /** Where /work's repository stands, or null when /work is not one (read over h.fs,
   * writing nothing). */
  git(): Promise<GitSummary | null>;
  readonly fs: HarnessFs;
  readonly versions: { pyharness: string; pyodide: string };
  /** The tools the model is given, as it sees them. */
  readonly tools: ToolInfo[];
  /** What is in force on this page (updated when the sandbox starts). */
  readonly containment: Containment;
  /** The last 100 messages from the worker that the page dropped (and `mcp_unavailable`). */
  readonly diagnostics: Diagnostic[];
  /** The `mcp` option's servers, as connected at boot. */
  readonly mcp: McpServerStatus[];
  /** Where /work lives. */
  readonly storage: StorageInfo;
  /** This origin's stored workspaces. */
  readonly workspaces: { list(): Promise<WorkspaceInfo[]>; delete(name: string): Promise<void> };
  /** Conversations over this workspace; h.prompt continues the current one. */
  readonly threads: Threads;
  prompt(text: string, opts?: PromptOptions): Run;
  /** Take back what a run changed in /work, all or nothing (ECONFLICT, ENOENT). */
  revert(runId: string, opts?: RevertOptions): Promise<RevertResult>;
  /** What a run changed, per path. */
  diff(runId: string): Promise<PathDiff[]>;
  /** The runs that can be reverted, oldest first. */
  checkpoints(): Promise<CheckpointInfo[]>;
  /** A folder of /work shown as a website, contained (docs/embedding.md, "Preview"). */
  preview(options?: PreviewOptions): Preview;
  /** What this harness and the current thread used, and the budget in force. */
  usage(): Promise<UsageInfo>;
  /** Replace the budget in force (null: none), at once (EINVAL names a bad field). */
  setBudget(budget: Budget | null): Promise<UsageInfo>;
  /** Cancel every running run. */
  cancel(): void;
  /** Listen to the events of every run; returns an unsubscribe function. */
  subscribe(listener: (event: PyharnessEvent) => void): () => void;
  /** Terminate the worker and the sandbox, in any state; pending and later calls reject with ECANCELED. */
  close(): void;
  /** Resolves with the error every call gets once the harness has closed, for any reason
   * (close(): ECANCELED; another tab took the workspace over: EBUSY; a failure). */
  readonly closed: Promise<HarnessError>;
}

export declare function createHarness(options: HarnessOptions): Promise<Harness>;
/** This origin's stored workspaces (OPFS). */
export declare function listWorkspaces(): Promise<WorkspaceInfo[]>;
/** Delete a stored workspace; rejects while a harness has it open. */
export declare function deleteWorkspace(name: string): Promise<void>;
