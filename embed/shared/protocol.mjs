// The message protocol, written once: every message type of every channel (page ↔
// harness worker, harness worker ↔ sandbox, page ↔ sandbox frame), its fields, when it
// is allowed, and the diagnostic code when it is dropped. Every receiver dispatches
// through `receiver()` below, so what it handles is exactly this table;
// tests/js-unit/protocol*.test.mjs hold the receivers, docs/protocol.md and
// docs/security.md to it, and tests/test_protocol_fs.py the h.fs requests to the
// pydantic models of harness/workspace/fsops.py.
//
// Field kinds: "string", "string<=N" (at most N characters), "integer", "number",
// "positive" (a finite number > 0),
// "boolean", "object", "array", "strings" (an array of strings), "buffer" (ArrayBuffer),
// "bytes" (Uint8Array), "port" (MessagePort), "null", "any"; "a|b" is either; a trailing
// "?" makes the field optional (absent or undefined). An array of literals is an enum; a
// nested object is a nested set of fields; `[{...}]` is an array of such objects. Keys a
// message has beyond its fields are ignored (no receiver reads them).

/** A diagnostic code, with what it means (docs/security.md lists them from here), and
 * `by`: the channel whose receiver raises it outside the table (a handler's own check).
 * @param {string} name @param {string} meaning @param {string | null} [by] */
const code = (name, meaning, by = null) => Object.freeze({ name, meaning, by });

/** Every diagnostic code, by constant name. Codes are stable: pages may match on them. */
export const DIAGNOSTICS = Object.freeze({
  MALFORMED: code("malformed", "not an object with a string `type`, or a field of the wrong kind"),
  UNKNOWN_TYPE: code("unknown_type", "a type the receiver does not take on that channel"),
  UNEXPECTED_REPLY: code("unexpected_reply", "a reply to an id that is not pending, or of another type than the request's"),
  UNEXPECTED_READY: code("unexpected_ready", "a second `ready`"),
  UNEXPECTED_PROGRESS: code("unexpected_progress", "`progress` after boot"),
  UNEXPECTED_BOOT_ERROR: code("unexpected_boot_error", "`boot_error` after boot (a forged one cannot disable `close()`)"),
  MALFORMED_EVENT: code("malformed_event", "an `event` without a string `type` and `runId`"),
  UNEXPECTED_EVENT: code("unexpected_event", "an event of a run that is not running, or whose `seq` is not the next one"),
  UNEXPECTED_FILE_CHANGE: code("unexpected_file_change", "a `file_changes` before `ready`"),
  UNEXPECTED_REQUEST: code("unexpected_request", "a request (`prompt`, `fetch`, `toolcall`, `netfetch`, …) before `ready`"),
  UNEXPECTED_TOOLCALL: code("unexpected_toolcall", "a `toolcall` outside a run, for a tool the page does not have, or a duplicate id"),
  INVALID_TOOL_INPUT: code(
    "invalid_tool_input",
    "a `toolcall` whose input breaks the tool's JSON Schema (checked on the page)",
    "workerToPage",
  ),
  UNEXPECTED_APPROVAL: code(
    "unexpected_approval",
    "an `approval` outside a run, or with the id of one already pending (answered `deny`, but for a duplicate id)",
  ),
  REFUSED_FETCH: code("refused_fetch", "a `fetch` that is not a `POST` to the model's endpoint, or malformed (answered `fetch_error`)"),
  UNEXPECTED_STORAGE: code("unexpected_storage", "`storage` or `workspace_taken` without a persistent (OPFS) store"),
  UNEXPECTED_SANDBOX_RESTART: code("unexpected_sandbox_restart", "`sandbox_restart`, `sandbox_deadline` or `sandbox_done` without a shell"),
  UNEXPECTED_SANDBOX_PORT: code("unexpected_sandbox_port", "a `sandbox_port` to a worker without a shell"),
  MCP_UNAVAILABLE: code(
    "mcp_unavailable",
    "an MCP server (the `mcp` option) that did not connect or list its tools at boot: the harness boots without them",
    "page",
  ),
  RECEIVER_FAILED: code("receiver_failed", "the worker failed while handling the message (a bug: the message says where)", "pageToWorker"),
  SANDBOX_SPOKE: code("sandbox_spoke", "the sandbox sent a message while no command was running (it is torn down)"),
  SANDBOX_FORGED: code("sandbox_forged", "a `result` with another nonce than the running command's (torn down)"),
  SANDBOX_FLOOD: code(
    "sandbox_flood",
    "more than 101 messages in one command, or more than 4 extra while booting (torn down)",
    "sandboxToHarness",
  ),
  SANDBOX_MALFORMED: code("sandbox_malformed", "a sandbox message that is neither a result nor a network request (torn down)"),
  SANDBOX_RESTORE: code(
    "sandbox_restore",
    "installing again the packages earlier sandboxes had took too long: the sandbox was replaced and they are no longer installed again (pip can)",
    "sandboxToHarness",
  ),
  SANDBOX_CONFLICT: code(
    "sandbox_conflict",
    "a command's change to a file the page wrote meanwhile: the newer write was kept",
    "sandboxToHarness",
  ),
});

const C = Object.fromEntries(Object.entries(DIAGNOSTICS).map(([k, v]) => [k, v.name]));
/** The codes as strings, for the drop sites: `CODE.UNEXPECTED_REPLY` is "unexpected_reply". */
export const CODE = Object.freeze(/** @type {Record<keyof typeof DIAGNOSTICS, string>} */ (C));

/** What the sandbox client may report through `sandbox_dropped` (and nothing else). */
export const SANDBOX_CODES = Object.freeze([
  C.SANDBOX_SPOKE,
  C.SANDBOX_FORGED,
  C.SANDBOX_FLOOD,
  C.SANDBOX_MALFORMED,
  C.SANDBOX_CONFLICT,
  C.SANDBOX_RESTORE,
]);

/** What the page says of a sandbox it hands the worker (`sandbox_port`'s reason), beside
 * the reason the worker gave in `sandbox_restart`, which it passes back: the first
 * sandbox of a harness, or a fresh one after the page's own deadline killed the last. */
export const PAGE_SANDBOX = Object.freeze({ BOOT: "boot", DEADLINE: "deadline" });

/** When a message is allowed, by name: the receiver's state (`when`) or its content (`accept`). */
export const CONDITIONS = Object.freeze({
  booting: "while the harness boots (before `ready` or `boot_error`)",
  ready: "after `ready`",
  awaited: "while a request with this `id` is pending, as its reply type",
  fetchOpen: "while the model request with this `id` is open",
  toolPending: "while the page tool call with this `id` is pending",
  approvalPending: "while the approval with this `id` is pending",
  netPending: "while the network request with this `id` is pending",
  shell: "when the shell is on",
  opfs: "when the workspace is kept in OPFS",
  inRun: "during a run",
  knownTool: "for a tool the page has",
  newToolId: "with an `id` no running call has",
  newApprovalId: "with an `id` no pending approval has",
  modelEndpoint: "as a `POST` to the model's endpoint, with string headers and body",
  nextEvent: "for a running run, with its next `seq`",
  idle: "while no command runs",
  running: "while the command with this `nonce` runs",
  command: "while a command runs",
  ourNonce: "with the running command's `nonce`",
  sandboxBooting: "while the sandbox boots",
  frameBooting: "once, before the frame started",
  frameStarted: "once, after the frame got its files and port",
});

// ---------------------------------------------------------------------------
// The h.fs requests (the JSON text of an `fs` message): what harness/workspace/fsops.py's pydantic
// models accept, field for field (tests/test_protocol_fs.py). No other keys are allowed.

export const FS_REQUESTS = Object.freeze({
  readFile: { path: "string" },
  writeFile: { path: "string", append: "boolean?" },
  readdir: { path: "string" },
  stat: { path: "string" },
  mkdir: { path: "string", recursive: "boolean?" },
  rm: { path: "string", recursive: "boolean?", force: "boolean?" },
  rename: { from: "string", to: "string" },
  exportZip: {},
  importZip: { replace: "boolean?" },
});

/** The parsed fs request `value` if it is well-formed by FS_REQUESTS (exact keys, strict
 * kinds), else null. The worker's fast paths take only what passes; Python checks again. */
export function fsRequest(value) {
  if (value === null || typeof value !== "object" || Array.isArray(value) || !Object.hasOwn(FS_REQUESTS, value.op)) return null;
  const fields = FS_REQUESTS[value.op];
  for (const key of Object.keys(value)) if (key !== "op" && !Object.hasOwn(fields, key)) return null;
  return problemOf(fields, value) === null ? value : null;
}

// ---------------------------------------------------------------------------
// The channels

/**
 * @typedef {{fields: Record<string, any>, variants?: Record<string, any>[], when: [string, string | null][],
 *   accept: [string, string | null][], malformed?: string | null, summary: string}} Entry
 * @param {Record<string, any>} fields @param {Partial<Entry> & {summary: string}} more @returns {Readonly<Entry>}
 */
const entry = (fields, more) => Object.freeze({ fields: Object.freeze(fields), when: [], accept: [], ...more });
const ID = "integer";

/**
 * Each channel: who sends, which module receives, how a drop is reported, the codes for
 * a message that is not an object with a string type (`malformed`) and for an unknown
 * type (`unknown`); and per type: `fields` (or `variants`, one of which must match, next
 * to the common fields), `when` (the receiver's state, checked first: [condition, code])
 * and `accept` (checks on the content, after the fields), `malformed` (the code for
 * wrong fields when it is not the channel's), and `summary` (for the docs).
 * A code of null: dropped silently (a late answer, or a receiver nobody listens to).
 */
/** The answer to a JSON request (threads, checkpoint, usage): `{ok: true, value}` or an error. */
const jsonReply = (summary, bytes = false) =>
  entry(
    { id: ID },
    {
      variants: [
        bytes ? { ok: [true], value: "any", data: "buffer?" } : { ok: [true], value: "any" },
        { ok: [false], code: "string", message: "string" },
      ],
      when: [["awaited", C.UNEXPECTED_REPLY]],
      summary,
    },
  );

export const PROTOCOL = Object.freeze({
  pageToWorker: Object.freeze({
    from: "page",
    to: "worker",
    receiver: "embed/worker/worker.mjs",
    reports: "a `protocol_error` with the code (and the message's `id`, which rejects a pending call with `EINVAL`)",
    malformed: C.MALFORMED,
    unknown: C.UNKNOWN_TYPE,
    types: Object.freeze({
      init: entry(
        { baseUrl: "string", config: "object?", storage: "object?" },
        { summary: "boot (a second one is answered `boot_error`)" },
      ),
      fs: entry(
        { id: ID, request: "string", data: "buffer?", call: "integer?" },
        { summary: "one h.fs call (`request`: FS_REQUESTS; `call`: the page tool call it is part of)" },
      ),
      threads: entry({ id: ID, request: "string" }, { summary: "one h.threads call" }),
      checkpoint: entry({ id: ID, request: "string" }, { summary: "one h.revert, h.diff or h.checkpoints call" }),
      usage: entry({ id: ID, request: "string" }, { summary: "one h.usage or h.setBudget call" }),
      preview: entry(
        { id: ID, request: "string" },
        { summary: 'one request of h.preview\'s: a file it loads (`{op: "read", path}`) or a load\'s report (`{op: "report", ...}`)' },
      ),
      prompt: entry(
        { runId: "string<=200", text: "string", attachments: "array?", mode: "string?", plan: "string?" },
        {
          when: [["ready", C.UNEXPECTED_REQUEST]],
          summary:
            'start a run (`attachments`: [{path, type, size}] written to /work/attachments/ first; `mode`: "plan"; `plan`: an approved plan to carry out)',
        },
      ),
      cancel: entry({ runId: "string?" }, { summary: "cancel one run or all" }),
      echo: entry({ id: "any", data: "buffer?" }, { summary: "a raw round trip" }),
      stats: entry({ id: "any" }, { summary: "the worker's memory" }),
      toolres: entry(
        { id: ID, ok: "boolean", output: "string", images: "array?" },
        { when: [["toolPending", null]], summary: "a page tool's answer (`images`: an MCP tool's, [{mediaType, data}])" },
      ),
      approvalres: entry(
        { id: ID, decision: ["once", "always", "deny"], message: "string<=2000?" },
        { when: [["approvalPending", null]], summary: "the page's answer to an `approval`" },
      ),
      fetch_head: entry(
        { id: ID, status: "integer", headers: "object" },
        { when: [["fetchOpen", null]], summary: "the model request's status" },
      ),
      fetch_chunk: entry({ id: ID, data: "buffer" }, { when: [["fetchOpen", null]], summary: "a piece of its body" }),
      fetch_end: entry({ id: ID }, { when: [["fetchOpen", null]], summary: "its end" }),
      fetch_error: entry({ id: ID, message: "string" }, { when: [["fetchOpen", null]], summary: "its failure" }),
      sandbox_port: entry(
        { port: "port", generation: "integer", reason: "string" },
        { when: [["shell", C.UNEXPECTED_SANDBOX_PORT]], summary: "a fresh sandbox" },
      ),
      netres: entry(
        { id: ID },
        {
          variants: [{ error: "string" }, { status: "integer", statusText: "string", headers: "object", body: "buffer", url: "string" }],
          when: [["netPending", C.UNEXPECTED_REPLY]],
          summary: "the answer to a `netfetch`",
        },
      ),
    }),
  }),

  workerToPage: Object.freeze({
    from: "worker",
    to: "page",
    receiver: "embed/page/pyharness.mjs",
    reports: "`h.diagnostics` (and `onDiagnostic`, and the console once per code)",
    malformed: C.MALFORMED,
    unknown: C.UNKNOWN_TYPE,
    types: Object.freeze({
      progress: entry(
        { step: "string", state: ["start", "done"], ms: "number", bytes: "number?" },
        { when: [["booting", C.UNEXPECTED_PROGRESS]], summary: "boot progress" },
      ),
      ready: entry(
        { versions: "object", tools: "array", workerCsp: "boolean", storage: "object" },
        { when: [["booting", C.UNEXPECTED_READY]], summary: "boot finished" },
      ),
      boot_error: entry({ step: "string", message: "string" }, { when: [["booting", C.UNEXPECTED_BOOT_ERROR]], summary: "boot failed" }),
      fsres: jsonReply("an h.fs answer", true),
      threadsres: jsonReply("an h.threads answer"),
      checkpointres: jsonReply("an h.revert / h.diff answer"),
      usageres: jsonReply("an h.usage / h.setBudget answer"),
      previewres: jsonReply("an answer to h.preview's request (a file's bytes in `data`)", true),
      echo: entry(
        { id: ID, data: "buffer?", wasmBytes: "number?", jsHeapBytes: "number|null?", linksTrusted: "boolean?" },
        { when: [["awaited", C.UNEXPECTED_REPLY]], summary: "the answer to `echo` and `stats`" },
      ),
      event: entry(
        { event: { type: "string", runId: "string", seq: "any" } },
        { malformed: C.MALFORMED_EVENT, accept: [["nextEvent", C.UNEXPECTED_EVENT]], summary: "one run event" },
      ),
      file_changes: entry(
        { events: [{ type: ["file_change"], seq: "integer", path: "string", kind: ["created", "modified", "deleted", "renamed"] }] },
        {
          when: [["ready", C.UNEXPECTED_FILE_CHANGE]],
          summary: "paths in /work changed (a tool call's or an h.fs call's doing), in order, once saved: one message for a burst",
        },
      ),
      storage: entry(
        {},
        {
          variants: [{ error: "null" }, { error: { code: ["ENOSPC", "EIO"], message: "string" } }],
          when: [["opfs", C.UNEXPECTED_STORAGE]],
          summary: "saving failed, or works again",
        },
      ),
      workspace_taken: entry({ saved: "boolean" }, { when: [["opfs", C.UNEXPECTED_STORAGE]], summary: "another tab took the workspace" }),
      toolcall: entry(
        { id: ID, name: "string", input: "string" },
        {
          when: [
            ["ready", C.UNEXPECTED_REQUEST],
            ["inRun", C.UNEXPECTED_TOOLCALL],
          ],
          accept: [
            ["knownTool", C.UNEXPECTED_TOOLCALL],
            ["newToolId", C.UNEXPECTED_TOOLCALL],
          ],
          malformed: C.UNEXPECTED_TOOLCALL,
          summary: "run a page tool (refused with an error `toolres`, but for a duplicate id)",
        },
      ),
      toolcancel: entry({ id: ID }, { when: [["ready", C.UNEXPECTED_REQUEST]], summary: "abort a page tool" }),
      approval: entry(
        { id: ID, request: { callId: "string", tool: "string", input: "object", rule: "string" } },
        {
          when: [
            ["ready", C.UNEXPECTED_REQUEST],
            ["inRun", C.UNEXPECTED_APPROVAL],
          ],
          accept: [["newApprovalId", C.UNEXPECTED_APPROVAL]],
          malformed: C.UNEXPECTED_APPROVAL,
          summary: "ask `onApproval` whether a call may run (refused: answered `deny`, but for a duplicate id)",
        },
      ),
      approvalcancel: entry(
        { id: ID },
        { when: [["ready", C.UNEXPECTED_REQUEST]], summary: "the approval is moot (timeout, cancel): abort its signal" },
      ),
      fetch: entry(
        { id: ID, url: "string", method: "string", headers: "object", body: "string|null?" },
        {
          when: [["ready", C.UNEXPECTED_REQUEST]],
          accept: [["modelEndpoint", C.REFUSED_FETCH]],
          malformed: C.REFUSED_FETCH,
          summary: "make a model request (refused with `fetch_error`)",
        },
      ),
      fetch_abort: entry({ id: ID }, { when: [["ready", C.UNEXPECTED_REQUEST]], summary: "stop a model request" }),
      netfetch: entry(
        { id: ID, command: "string<=64", url: "string", method: "string", headers: "object", body: "string|buffer|null" },
        {
          when: [["ready", C.UNEXPECTED_REQUEST]],
          summary: "a network request of the model's code (malformed: answered `netres` with an error)",
        },
      ),
      sandbox_restart: entry(
        { reason: "string<=40", generation: "integer" },
        { when: [["shell", C.UNEXPECTED_SANDBOX_RESTART]], summary: "replace a sandbox" },
      ),
      sandbox_deadline: entry(
        { generation: "integer", command: "string<=64", ms: "positive" },
        { when: [["shell", C.UNEXPECTED_SANDBOX_RESTART]], summary: "a command's hard deadline" },
      ),
      sandbox_done: entry(
        { generation: "integer", command: "string<=64" },
        { when: [["shell", C.UNEXPECTED_SANDBOX_RESTART]], summary: "the command ended" },
      ),
      sandbox_dropped: entry({ code: [...SANDBOX_CODES], message: "string" }, { summary: "recorded in `h.diagnostics` under its `code`" }),
      protocol_error: entry(
        { id: "any", runId: "any", code: "string?", message: "string" },
        { summary: "the worker could not use a message (a pending call with its `id` rejects)" },
      ),
    }),
  }),

  harnessToSandbox: Object.freeze({
    from: "harness worker",
    to: "sandbox",
    receiver: "shell/sandbox.mjs",
    reports: "nothing: the sandbox ignores what it does not expect (nobody is listening)",
    malformed: null,
    unknown: null,
    types: Object.freeze({
      run: entry(
        { nonce: "string", command: "string", limits: "object", sync: "object", packages: "object?" },
        { when: [["idle", null]], summary: "run one command line (`packages`: what the bundle ships, what to install again)" },
      ),
      cancel: entry({ nonce: "string" }, { when: [["running", null]], summary: "stop the command" }),
      net_result: entry(
        { id: ID },
        {
          variants: [{ error: "string" }, { status: "integer", statusText: "string", headers: "object", body: "buffer", url: "string" }],
          when: [["netPending", null]],
          summary: "the answer to `net` (the page's) or `pkg` (a bundle file)",
        },
      ),
      gate_result: entry(
        { id: ID, refusal: "string?", error: "string?" },
        { when: [["netPending", null]], summary: "the answer to `gate`: no `refusal`, the command runs; else why not" },
      ),
    }),
  }),

  sandboxToHarness: Object.freeze({
    from: "sandbox",
    to: "harness worker",
    receiver: "embed/worker/sandbox-client.mjs",
    reports: "`sandbox_dropped` to the page, and the sandbox is torn down",
    malformed: C.SANDBOX_MALFORMED,
    unknown: C.SANDBOX_MALFORMED,
    types: Object.freeze({
      ready: entry({ ms: "number?", probes: "object?" }, { when: [["sandboxBooting", C.SANDBOX_MALFORMED]], summary: "booted" }),
      boot_error: entry({ message: "any" }, { when: [["sandboxBooting", C.SANDBOX_MALFORMED]], summary: "the boot failed" }),
      result: entry(
        { nonce: "string" },
        {
          variants: [
            { error: "string" },
            {
              stdout: "string",
              stderr: "string",
              exitCode: "integer",
              timedOut: "boolean?",
              installed: "strings?",
              changes: { dirs: "strings", removed: "strings", skipped: "strings", files: [{ path: "string", data: "bytes" }] },
            },
          ],
          when: [["command", C.SANDBOX_SPOKE]],
          accept: [["ourNonce", C.SANDBOX_FORGED]],
          malformed: null,
          summary: "the command's one result (a malformed one ends the command with an error)",
        },
      ),
      net: entry(
        { id: "any", url: "any", method: "any", headers: "any", body: "any" },
        { when: [["command", C.SANDBOX_SPOKE]], summary: "a network request (bounds checked, else answered with an error)" },
      ),
      gate: entry(
        { id: "any", command: "any", argv: "any" },
        {
          when: [["command", C.SANDBOX_SPOKE]],
          summary:
            "a simple command about to run, as the interpreter expanded it (`argv`, and `command`: its words joined by spaces): the `bash` rule decides (answered by `gate_result`)",
        },
      ),
      restored: entry(
        { nonce: "string" },
        {
          when: [["command", C.SANDBOX_SPOKE]],
          accept: [["ourNonce", C.SANDBOX_FORGED]],
          summary: "the packages of earlier sandboxes are installed again: the command's own deadline starts",
        },
      ),
      pkg: entry(
        { id: "any", file: "any" },
        { when: [["command", C.SANDBOX_SPOKE]], summary: "a wheel of the bundle's package index, by file name (answered by `net_result`)" },
      ),
    }),
  }),

  pageToFrame: Object.freeze({
    from: "page",
    to: "sandbox frame",
    receiver: "embed/sandbox/sandbox-frame.js",
    reports: "nothing: the frame takes one message from its parent and ignores the rest",
    malformed: null,
    unknown: null,
    types: Object.freeze({
      boot: entry(
        { files: "object", port: "port", probeUrl: "string" },
        { when: [["frameBooting", null]], summary: "the sandbox's files and its port to the harness worker" },
      ),
    }),
  }),

  frameToPage: Object.freeze({
    from: "sandbox frame",
    to: "page",
    receiver: "embed/page/sandbox-host.mjs",
    reports: "nothing: what a frame says out of turn is ignored",
    malformed: null,
    unknown: null,
    types: Object.freeze({
      frame_ready: entry({}, { when: [["frameBooting", null]], summary: "the frame's script runs" }),
      ready: entry({ ms: "number?", probes: "object?" }, { when: [["frameStarted", null]], summary: "the sandbox's boot report" }),
      boot_error: entry({ message: "string?" }, { when: [["frameStarted", null]], summary: "its boot failed" }),
    }),
  }),
});

// ---------------------------------------------------------------------------
// Checking

const PLAIN = {
  string: (v) => typeof v === "string",
  integer: (v) => Number.isInteger(v),
  number: (v) => typeof v === "number" && !Number.isNaN(v),
  positive: (v) => typeof v === "number" && v > 0 && Number.isFinite(v),
  boolean: (v) => typeof v === "boolean",
  object: (v) => v !== null && typeof v === "object" && !Array.isArray(v),
  array: (v) => Array.isArray(v),
  strings: (v) => Array.isArray(v) && v.every((s) => typeof s === "string"),
  buffer: (v) => v instanceof ArrayBuffer,
  bytes: (v) => v instanceof Uint8Array,
  port: (v) => typeof MessagePort !== "undefined" && v instanceof MessagePort,
  null: (v) => v === null,
  any: () => true,
};

/** The test of one alternative of a field's kind. */
function kindTest(kind) {
  const bounded = /^string<=(\d+)$/.exec(kind);
  if (bounded) {
    const most = Number(bounded[1]);
    return (v) => typeof v === "string" && v.length <= most;
  }
  const test = PLAIN[kind];
  if (test === undefined) throw new Error(`protocol.mjs: unknown field kind '${kind}'`);
  return test;
}

const KIND_TESTS = new Map(); // a field's kind (string) → its test
const SPEC_TESTS = new WeakMap(); // an enum, a list's item or an object of fields → its test

/**
 * Whether `value` fits `spec` (a field's kind, an enum, a list of objects, an object of
 * fields): fieldProblem(spec, value) === null, as one test made once per spec. A message
 * is checked with it first; the words of a problem are made only for one that fails (a
 * `file_changes` of 10,000 paths made 50,000 of them, and split each kind and matched it
 * against a pattern 50,000 times, on the page's main thread).
 * @returns {(value: unknown) => boolean}
 */
function fits(spec) {
  if (typeof spec === "string") {
    let test = KIND_TESTS.get(spec);
    if (test === undefined) {
      const optional = spec.endsWith("?");
      const tests = (optional ? spec.slice(0, -1) : spec).split("|").map(kindTest);
      const any = tests.length === 1 ? tests[0] : (v) => tests.some((t) => t(v));
      test = optional ? (v) => v === undefined || any(v) : any;
      KIND_TESTS.set(spec, test);
    }
    return test;
  }
  let test = SPEC_TESTS.get(spec);
  if (test === undefined) {
    if (Array.isArray(spec) && spec.length === 1 && typeof spec[0] === "object") {
      const item = fits(spec[0]);
      test = (v) => {
        if (!Array.isArray(v)) return false;
        for (let i = 0; i < v.length; i++) if (!item(v[i])) return false;
        return true;
      };
    } else if (Array.isArray(spec)) {
      test = (v) => spec.includes(v);
    } else {
      /** @type {[string, (value: unknown) => boolean][]} */
      const fields = Object.entries(spec).map(([name, field]) => [name, fits(field)]);
      test = (v) => PLAIN.object(v) && fields.every(([name, t]) => t(/** @type {any} */ (v)[name]));
    }
    SPEC_TESTS.set(spec, test);
  }
  return test;
}

/** Why `value` does not fit `spec` (a field's kind, enum, nested fields), or null. */
function fieldProblem(spec, value, where) {
  if (fits(spec)(value)) return null;
  if (typeof spec === "string") {
    const kinds = (spec.endsWith("?") ? spec.slice(0, -1) : spec).split("|");
    return `'${where}' must be ${kinds.join(" or ")}`;
  }
  if (Array.isArray(spec) && spec.length === 1 && typeof spec[0] === "object") {
    if (!Array.isArray(value)) return `'${where}' must be an array`;
    for (let i = 0; i < value.length; i++) {
      const problem = fieldProblem(spec[0], value[i], `${where}[${i}]`);
      if (problem !== null) return problem;
    }
    return null;
  }
  if (Array.isArray(spec)) return `'${where}' must be one of ${spec.map((v) => JSON.stringify(v)).join(", ")}`;
  if (!PLAIN.object(value)) return `'${where}' must be an object`;
  return problemOf(spec, value, `${where}.`);
}

/** Why the object `value` does not have `fields`, or null. */
function problemOf(fields, value, prefix = "") {
  for (const [name, spec] of Object.entries(fields)) {
    const problem = fieldProblem(spec, value[name], prefix + name);
    if (problem !== null) return problem;
  }
  return null;
}

/**
 * Check one received message on `channel` against the table, with the receiver's
 * `conditions` (name → (ctx, message) → boolean) for its `when` and `accept` checks.
 * @param {keyof typeof PROTOCOL} channel
 * @param {any} message
 * @param {Record<string, (ctx: any, message: any) => boolean>} [conditions]
 * @param {unknown} [ctx]
 * @returns {null | {code: string | null, condition?: string, type?: string, reason: string}}
 *   null when the message may be handled; else why it is dropped and its code
 */
export function check(channel, message, conditions = {}, ctx = undefined) {
  const table = PROTOCOL[channel];
  if (message === null || typeof message !== "object" || typeof message.type !== "string") {
    return { code: table.malformed, reason: "a message that is not an object with a string type" };
  }
  const { type } = message;
  const spec = Object.hasOwn(table.types, type) ? table.types[type] : undefined;
  if (spec === undefined) return { code: table.unknown, type, reason: `unknown message type '${type.slice(0, 40)}'` };
  const failed = (list) => {
    for (const [condition, code] of list) {
      if (!conditions[condition](ctx, message))
        return { code, condition, type, reason: `a ${type}, allowed only ${CONDITIONS[condition]}` };
    }
    return null;
  };
  const early = failed(spec.when);
  if (early !== null) return early;
  let problem = problemOf(spec.fields, message);
  if (problem === null && spec.variants) {
    const problems = spec.variants.map((fields) => problemOf(fields, message));
    if (!problems.includes(null)) problem = problems.join(", or ");
  }
  if (problem !== null) {
    const code = spec.malformed === undefined ? table.malformed : spec.malformed;
    return { code, type, condition: "fields", reason: `a malformed ${type}: ${problem}` };
  }
  return failed(spec.accept);
}

/** What each receiver registered (tests/js-unit/protocol-receivers.test.mjs reads it). */
export const RECEIVERS = new Map();

/**
 * A receiver for `channel`: `handlers` (type → (ctx, message)) must be exactly the
 * channel's types, `conditions` every condition its table uses. `receive(ctx, message,
 * drop)` checks the message and calls its handler, or `drop(problem, message)`.
 * @template C
 * @param {keyof typeof PROTOCOL} channel
 * @param {Record<string, (ctx: C, message: any) => any>} handlers
 * @param {Record<string, (ctx: C, message: any) => boolean>} [conditions]
 */
export function receiver(channel, handlers, conditions = {}) {
  RECEIVERS.set(channel, { handlers: Object.keys(handlers), conditions: Object.keys(conditions) });
  return {
    /** @param {C} ctx @param {any} message @param {(problem: NonNullable<ReturnType<typeof check>>, message: any) => any} drop */
    receive(ctx, message, drop) {
      const problem = check(channel, message, conditions, ctx);
      if (problem !== null) return drop(problem, message);
      return handlers[message.type](ctx, message);
    },
  };
}
