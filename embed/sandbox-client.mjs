// The harness worker's end of the sandbox (shell/sandbox.mjs), over the MessagePort the
// page hands it. Everything the sandbox sends is hostile input: only a `ready` /
// `boot_error` while booting and the `result` of the one pending command are taken,
// their fields are type-checked and bounded, and the rest is dropped. The harness owns
// the hard deadline: a command that overruns (a C-level loop, a catastrophic regex) gets
// its sandbox torn down by the page (`sandbox_restart`) and a fresh one started.

const BOOT_TIMEOUT_MS = 60_000; // a cold Pyodide boot on a slow machine
const GRACE_MS = 250; // past the shell's timeoutMs before the sandbox is killed
const CANCEL_GRACE_MS = 300; // a cancelled command's time to stop by itself
const MAX_TEXT = 16 * 1024 * 1024; // characters of stdout/stderr taken from a result
const MAX_NET_PER_COMMAND = 100; // network requests one command may make
const MAX_NET_BODY = 10 * 1024 * 1024; // characters of a request body

/**
 * @param {() => void} requestRestart ask the page for a fresh sandbox (a new port follows)
 * @param {(request: object) => Promise<object>} netFetch ask the page for one network
 *   request (it checks the allow-list); resolves with {error} or the response
 */
export function createSandboxClient(requestRestart, netFetch) {
  let port = null;
  let generation = -1;
  let state = "none"; // none | booting | ready | failed
  let bootError = "";
  let waiters = [];
  let pending = null; // {id, resolve, timer}
  let nextId = 1;

  const wake = () => {
    for (const w of waiters.splice(0)) w();
  };

  function attach(newPort, newGeneration) {
    if (!(newPort instanceof MessagePort) || newGeneration <= generation) return false;
    port?.close();
    port = newPort;
    generation = newGeneration;
    state = "booting";
    port.onmessage = (event) => receive(event.data);
    wake();
    return true;
  }

  function receive(message) {
    if (!message || typeof message !== "object") return;
    if (state === "booting" && message.type === "ready") {
      state = "ready";
      return wake();
    }
    if (state === "booting" && message.type === "boot_error") {
      state = "failed";
      bootError = String(message.message).slice(0, 2000);
      return wake();
    }
    if (state === "ready" && message.type === "result" && pending && message.id === pending.id) {
      settle(sanitize(message));
    }
    if (state === "ready" && message.type === "net") return void net(message);
  }

  /** A network request from the running command: checked here, decided by the page. */
  async function net(message) {
    const from = port;
    const reply = (answer, transfer = []) => {
      if (port === from) from.postMessage({ type: "net_result", id: message.id, ...answer }, transfer);
    };
    const request = netRequest(message);
    if (typeof request === "string") return reply({ error: request });
    if (!pending) return reply({ error: "no command is running" });
    if (++pending.netCount > MAX_NET_PER_COMMAND) return reply({ error: `more than ${MAX_NET_PER_COMMAND} network requests in one command` });
    const answer = await netFetch(request);
    if (typeof answer.error === "string") return reply({ error: answer.error.slice(0, 2000) });
    reply(answer, answer.body instanceof ArrayBuffer ? [answer.body] : []);
  }

  function settle(reply) {
    const p = pending;
    if (!p) return;
    pending = null;
    clearTimeout(p.timer);
    p.resolve(reply);
  }

  /** Tear the sandbox down now; the page starts a fresh one. */
  function kill(reason) {
    port?.close();
    port = null;
    state = "none";
    requestRestart();
    settle({ killed: reason });
  }

  async function ready() {
    const deadline = performance.now() + BOOT_TIMEOUT_MS;
    let restarted = false;
    while (state !== "ready") {
      if (state === "failed") {
        if (restarted) throw new Error(`the sandbox failed to start: ${bootError}`);
        restarted = true;
        state = "none";
        requestRestart();
      }
      const left = deadline - performance.now();
      if (left <= 0) {
        kill("boot");
        throw new Error(`the sandbox did not start within ${BOOT_TIMEOUT_MS / 1000} s`);
      }
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, left);
        waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  return {
    attach,

    /**
     * Run one command line. `meta` is JSON text {full, dirs, removed, files: [path]};
     * `datas` a PyProxy of the files' bytes (in the order of meta.files).
     * Resolves with {stdout, stderr, exitCode, timedOut, meta, datas} or {killed} or
     * {error}; never rejects for what the sandbox does.
     */
    async run(command, limitsJson, meta, datas) {
      const bytes = datas.toJs(); // before any await: Pyodide frees the proxy after the call
      const limits = JSON.parse(limitsJson);
      const sync = JSON.parse(meta);
      sync.files = sync.files.map((path, i) => ({ path, data: bytes[i].buffer }));
      try {
        await ready();
      } catch (err) {
        return { error: err.message };
      }
      if (pending) return { error: "another command is running in the sandbox" };
      const id = nextId++;
      const reply = new Promise((resolve) => {
        const timer = setTimeout(() => kill("timeout"), limits.timeoutMs + GRACE_MS);
        pending = { id, resolve, timer, netCount: 0 };
      });
      port.postMessage({ type: "run", id, command, limits, sync }, sync.files.map((f) => f.data));
      return reply;
    },

    /** The run was cancelled: ask the command to stop, kill the sandbox if it does not. */
    cancel() {
      if (!pending || !port) return;
      port.postMessage({ type: "cancel", id: pending.id });
      clearTimeout(pending.timer);
      pending.timer = setTimeout(() => kill("cancelled"), CANCEL_GRACE_MS);
    },

    close() {
      port?.close();
      port = null;
      state = "none";
    },
  };
}

/** A network request from the sandbox as plain checked data, or why it is refused. */
function netRequest({ url, method, headers, body }) {
  if (typeof url !== "string" || url.length > 8192) return "the URL must be a string of at most 8192 characters";
  if (typeof method !== "string" || !/^[A-Z]{1,10}$/.test(method)) return "the method must be a word like GET";
  const entries = headers && typeof headers === "object" ? Object.entries(headers) : null;
  if (!entries || entries.length > 50 || !entries.every(([k, v]) => typeof v === "string" && k.length < 256 && v.length < 8192)) {
    return "headers must be at most 50 string values";
  }
  if (body !== null && body !== undefined && (typeof body !== "string" || body.length > MAX_NET_BODY)) {
    return `the body must be a string of at most ${MAX_NET_BODY} characters`;
  }
  return { url, method, headers: Object.fromEntries(entries), body: body ?? null };
}

/** A result from the sandbox, as plain checked data (anything malformed is an error). */
function sanitize(message) {
  const text = (value) => (typeof value === "string" ? value.slice(0, MAX_TEXT) : "");
  const strings = (value) => Array.isArray(value) && value.every((v) => typeof v === "string");
  if (typeof message.error === "string") return { error: text(message.error) };
  const changes = message.changes;
  const files = changes && Array.isArray(changes.files) ? changes.files : null;
  if (!changes || !files || !strings(changes.dirs) || !strings(changes.removed) || !strings(changes.skipped)
      || !files.every((f) => f && typeof f.path === "string" && f.data instanceof Uint8Array)) {
    return { error: "the sandbox sent a malformed result" };
  }
  return {
    stdout: text(message.stdout),
    stderr: text(message.stderr),
    exitCode: Number.isInteger(message.exitCode) ? message.exitCode : 1,
    timedOut: message.timedOut === true,
    meta: JSON.stringify({ dirs: changes.dirs, removed: changes.removed, skipped: changes.skipped, files: files.map((f) => f.path) }),
    datas: files.map((f) => f.data),
  };
}
