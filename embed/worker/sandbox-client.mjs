// The harness worker's end of the sandbox (shell/sandbox.mjs), over the MessagePort the
// page hands it. Everything the sandbox sends is hostile input, and the sandbox is
// trusted for no longer than one command:
// - each command carries a fresh random nonce; one `result` with that nonce is taken for
//   the command in flight, its fields type-checked and bounded, and nothing else;
// - a command may send one result and at most MAX_NET_PER_COMMAND network requests; a
//   sandbox that sends more, sends a result for another nonce, or sends anything while no
//   command runs is torn down at once (its port closed: what it queued is never read);
// - the hard deadline is kept twice: by a timer here and by one on the page (which the
//   sandbox cannot delay, whatever it floods this worker with), which removes the iframe
//   and hands over a fresh sandbox;
// - a sandbox that ran a command is replaced at the end of the run (`recycle`): what
//   the model's code did in one run cannot reach a later run or another thread. The one
//   thing carried over is the list of packages `pip` installed (names and versions,
//   bounded), which the next sandbox installs again from the same allowed sources.
// Killing means asking the page (`sandbox_restart`): only the page can remove the iframe.

import { CODE, PAGE_SANDBOX, receiver } from "../shared/protocol.mjs";

const BOOT_TIMEOUT_MS = 60_000; // a cold Pyodide boot on a slow machine
const GRACE_MS = 250; // past the shell's timeoutMs before the sandbox is killed
const CANCEL_GRACE_MS = 300; // a cancelled command's time to stop by itself
const MAX_TEXT = 16 * 1024 * 1024; // characters of stdout/stderr taken from a result
export const MAX_NET_PER_COMMAND = 100; // network requests one command may make
const MAX_NET_BODY = 10 * 1024 * 1024; // characters of a request body
const MAX_NET_BYTES = 64 * 1024 * 1024; // bytes of a binary request body (a git push's pack)
// What a fresh sandbox may spend installing again what earlier ones had, before the
// command's own deadline starts (its `restored`); a sandbox that cannot in this time is
// replaced, and this harness stops installing them again (pip can, when asked).
const RESTORE_MS = 120_000;
const PAUSED_MS = 24 * 3600 * 1000;
const MAX_GATE_TEXT = 100_000; // characters of a command checked (shell/command-gate.mjs) // the page's deadline while a command waits for an approval
const MAX_BOOT_MESSAGES = 4; // what a booting sandbox may say besides ready/boot_error
const MAX_INSTALLED = 200; // packages carried from one sandbox to the next
const REQUIREMENT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}==[A-Za-z0-9][A-Za-z0-9.+!_-]{0,49}$/;
const PACKAGE_FILE = /^[A-Za-z0-9][A-Za-z0-9._+-]{0,200}\.whl$/;

/** Why the harness tears a sandbox down while a command runs, each reason once: what the
 * model is told of it (`why`, in the command's reply: harness/runtime/sandbox_shell.py
 * reads it, and names only TIMEOUT, which tests/test_worker_host.py holds to this
 * table) and the diagnostic the page records (`code`, from embed/shared/protocol.mjs,
 * when there is one). The reason is also `sandbox_restart`'s. */
const kill_ = (name, why, code = null) => Object.freeze({ name, why, code });
export const KILL = Object.freeze({
  TIMEOUT: kill_("timeout", "the command ran past its deadline"),
  RESTARTED: kill_("restarted", "the page replaced it"),
  FLOOD: kill_("flood", "it sent more messages than one command may", CODE.SANDBOX_FLOOD),
  SPOKE: kill_("spoke", "it sent a message while no command was running", CODE.SANDBOX_SPOKE),
  FORGED: kill_("forged", "it sent a result for another command", CODE.SANDBOX_FORGED),
  MALFORMED: kill_("malformed", "it sent a message the harness does not take", CODE.SANDBOX_MALFORMED),
  BOOT: kill_("boot", "it did not start in time"),
  CANCELLED: kill_("cancelled", "the run was cancelled and the command did not stop"),
  RECYCLED: kill_("recycled", "the run that used it ended"),
});
/** @typedef {typeof KILL[keyof typeof KILL]} Kill */
/** The kill for a diagnostic code a receiver raised (the table's drops). */
const KILL_OF_CODE = new Map(
  Object.values(KILL)
    .filter((k) => k.code !== null)
    .map((k) => [k.code, k]),
);
const BOOT_ERROR = "boot_error"; // the reason this client asks for a new one after a failed boot

/** A nonce no code in the sandbox can guess: 128 random bits, hex. */
function newNonce() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * @param {{
 *   restart: (reason: string, generation: number) => void,
 *   netFetch: (request: object, command: string) => Promise<{error?: string, body?: ArrayBuffer | null}>,
 *   packageFile?: (file: string) => Promise<{error?: string, body?: ArrayBuffer | null}>,
 *   packages?: {available: [string, string][], installed: string[], save: (installed: string[]) => void},
 *   commandStarted?: (command: {generation: number, nonce: string, ms: number}) => void,
 *   commandEnded?: (command: {generation: number, nonce: string}) => void,
 *   dropped?: (code: string, message: string) => void,
 * }} host
 *   restart: ask the page to replace the sandbox of that generation (a new port follows);
 *   netFetch: ask the page for one network request of that command (it checks the
 *   allow-list and aborts the command's requests when told it ended), resolving with
 *   {error} or the response; packageFile: one wheel of the bundle's package index, by
 *   name; packages: what the bundle ships, what was installed (kept by `save`);
 *   commandStarted/commandEnded: the page's deadline and
 *   the end of the command's requests; dropped: a diagnostic for the page
 */
export function createSandboxClient(host) {
  const { restart, netFetch, commandStarted = () => {}, commandEnded = () => {}, dropped = () => {} } = host;
  /** @type {(file: string) => Promise<{error?: string, body?: ArrayBuffer | null}>} */
  const packageFile = host.packageFile ?? (async () => ({ error: "this bundle has no package index" }));
  const packages = host.packages ?? { available: [], installed: [], save: () => {} };
  let installed = packages.installed.filter((r) => REQUIREMENT.test(r)).slice(0, MAX_INSTALLED);
  let restoredIn = -1; // the generation that installed `installed` again
  let restoreGaveUp = false; // a restore ran out of RESTORE_MS: not tried again
  let port = null;
  let generation = -1;
  let state = "none"; // none | booting | ready | failed
  let bootError = "";
  const waiters = [];
  let pending = null; // {nonce, resolve, timer, netCount, messages, ended (a promise)}
  let used = false; // the current sandbox ran a command: not to be reused by a later run
  let bootChatter = 0;
  /** @type {((generation: number) => void) | null} told when a sandbox is ready (watchReady) */
  let onReady = null;

  const wake = () => {
    for (const w of waiters.splice(0)) w();
  };

  /** A fresh sandbox from the page. `reason` PAGE_SANDBOX.DEADLINE: the page killed the last one. */
  function attach(newPort, newGeneration, reason) {
    if (!(newPort instanceof MessagePort) || !Number.isInteger(newGeneration) || newGeneration <= generation) return false;
    detach();
    port = newPort;
    generation = newGeneration;
    state = "booting";
    used = false;
    bootChatter = 0;
    port.onmessage = (event) => receive(newPort, event.data);
    settle(killed(reason === PAGE_SANDBOX.DEADLINE ? KILL.TIMEOUT : KILL.RESTARTED));
    wake();
    return true;
  }

  function detach() {
    if (port === null) return;
    port.onmessage = null;
    port.close(); // messages it still holds are never delivered
    port = null;
  }

  /** What FROM_SANDBOX's handlers and conditions see of this client. */
  const ctx = {
    booting: () => state === "booting",
    pending: () => pending,
    ready() {
      state = "ready";
      wake();
      onReady?.(generation);
    },
    bootFailed(message) {
      state = "failed";
      bootError = String(message).slice(0, 2000);
      wake();
    },
    result: (message) => {
      keepInstalled(message.installed);
      settle(sanitize(message));
    },
    net: (message) => void net(message, pending),
    pkg: (message) => void pkg(message, pending),
    gate: (message) => void gate(message, pending),
    restored: () => restored(pending),
  };

  function receive(from, message) {
    if (from !== port) return;
    if (state === "booting") {
      // anything but ready/boot_error is chatter, a few messages of which are forgiven
      return FROM_SANDBOX.receive(ctx, message, () => {
        if (++bootChatter > MAX_BOOT_MESSAGES) kill(KILL.FLOOD, "a booting sandbox that keeps sending");
      });
    }
    if (state !== "ready") return;
    if (pending === null) return kill(KILL.SPOKE, "the sandbox sent a message while no command was running");
    // A command asks once per simple command it runs (at most the shell's maxCommands),
    // apart from its result and network requests.
    if (message?.type === "gate") {
      if (++pending.gates > pending.maxGates) {
        return kill(KILL.FLOOD, `the sandbox asked about more than ${pending.maxGates} commands in one command line`);
      }
    } else if (++pending.messages > MAX_NET_PER_COMMAND + 1) {
      return kill(KILL.FLOOD, `the sandbox sent more than ${MAX_NET_PER_COMMAND + 1} messages in one command`);
    }
    FROM_SANDBOX.receive(ctx, message, ({ code, reason }) => {
      if (code === null) return settle({ error: "the sandbox sent a malformed result" });
      kill(KILL_OF_CODE.get(code) ?? KILL.MALFORMED, reason);
    });
  }

  /** A network request from the running command: checked here, decided by the page. */
  async function net(message, command) {
    const from = port;
    const reply = (answer, transfer = []) => {
      // Only to the sandbox that asked, and only while its command runs.
      if (port === from && pending === command) from.postMessage({ type: "net_result", id: message.id, ...answer }, transfer);
    };
    const request = netRequest(message);
    if (typeof request === "string") return reply({ error: request });
    // A push reaches a server only from a `git push` the rules allowed in this command
    // line: code of the model's that asks for git-receive-pack itself is refused here.
    if (command.gate !== null && isPush(request) && !command.pushAllowed) {
      return reply({
        error: "network: a push (git-receive-pack) is made only by a `git push` command, which the page's bash rules decide",
      });
    }
    if (++command.netCount > MAX_NET_PER_COMMAND)
      return reply({ error: `more than ${MAX_NET_PER_COMMAND} network requests in one command` });
    const answer = await netFetch(request, command.nonce);
    if (typeof answer.error === "string") return reply({ error: answer.error.slice(0, 2000) });
    reply(answer, answer.body instanceof ArrayBuffer ? [answer.body] : []);
  }

  /** A wheel of the bundle's package index (Pyodide's loadPackage in the sandbox), by
   * file name: fetched here from the bundle, never a URL the sandbox chose. */
  async function pkg(message, command) {
    const from = port;
    const reply = (answer, transfer = []) => {
      if (port === from && pending === command) from.postMessage({ type: "net_result", id: message.id, ...answer }, transfer);
    };
    if (typeof message.file !== "string" || !PACKAGE_FILE.test(message.file)) {
      return reply({ error: `not a package file of this bundle: ${String(message.file).slice(0, 200)}` });
    }
    if (++command.netCount > MAX_NET_PER_COMMAND)
      return reply({ error: `more than ${MAX_NET_PER_COMMAND} network requests in one command` });
    const answer = await packageFile(message.file);
    if (typeof answer.error === "string") return reply({ error: answer.error.slice(0, 2000) });
    const body = answer.body instanceof ArrayBuffer ? answer.body : new ArrayBuffer(0);
    reply({ status: 200, statusText: "OK", headers: {}, body, url: message.file }, [body]);
  }

  /** A simple command the running line is about to run: the harness's rules decide
   * (`pending.gate`, harness/policy/enforce.py); with no gate for this line, every command
   * was allowed when the line was, and the sandbox should not have asked. */
  async function gate(message, command) {
    const from = port;
    const reply = (answer) => {
      if (port === from && pending === command) from.postMessage({ type: "gate_result", id: message.id, ...answer });
    };
    const { command: text, argv } = message;
    if (
      typeof text !== "string"
      || text.length > MAX_GATE_TEXT
      || !Array.isArray(argv)
      || !argv.every((w) => typeof w === "string")
      || argv.join(" ") !== text
    ) {
      return reply({ refusal: "the command is not text the rules can check" });
    }
    if (command.gate === null) return reply({});
    pause(command); // the page's answer may take a while: it is not the command's time
    try {
      const refusal = await command.gate(text, argv);
      if (typeof refusal !== "string" && argv[0] === "git" && argv.includes("push")) command.pushAllowed = true;
      reply(typeof refusal === "string" ? { refusal: refusal.slice(0, 2000) } : {});
    } catch (err) {
      reply({ refusal: `the permission check failed: ${String(err?.message ?? err).slice(0, 500)}` });
    } finally {
      resume(command);
    }
  }

  /** The sandbox installed the packages again: the command's own deadline starts now. */
  function restored(command) {
    if (!command.restoring) return;
    command.restoring = false;
    restoredIn = command.generation;
    command.left = command.ms;
    if (command.paused > 0) return; // armed with `left` when the page has answered
    clearTimeout(command.timer);
    command.since = performance.now();
    command.timer = setTimeout(() => kill(KILL.TIMEOUT), command.ms);
    commandStarted({ generation: command.generation, nonce: command.nonce, ms: command.ms });
  }

  /** Stop the command's clock (here and on the page) while the page is asked; the
   * deadlines are armed again with what was left when the last question is answered.
   * Waiting costs the command nothing: the approval's own timeout bounds the wait. */
  function pause(command) {
    if (command.paused++ > 0 || pending !== command) return;
    clearTimeout(command.timer);
    command.left -= performance.now() - command.since;
    commandStarted({ generation: command.generation, nonce: command.nonce, ms: PAUSED_MS });
  }

  function resume(command) {
    if (--command.paused > 0 || pending !== command) return;
    command.since = performance.now();
    const ms = Math.max(0, command.left);
    command.timer = setTimeout(() => kill(KILL.TIMEOUT), ms);
    commandStarted({ generation: command.generation, nonce: command.nonce, ms });
  }

  /** What a result says is installed now: kept (bounded, checked) for the next sandbox. */
  function keepInstalled(list) {
    if (!Array.isArray(list)) return;
    const next = list.filter((r) => typeof r === "string" && REQUIREMENT.test(r)).slice(0, MAX_INSTALLED);
    if (next.length === installed.length && next.every((r, i) => r === installed[i])) return;
    installed = next;
    packages.save(installed);
  }

  function settle(reply) {
    const p = pending;
    if (!p) return;
    pending = null;
    clearTimeout(p.timer);
    commandEnded({ generation: p.generation, nonce: p.nonce });
    p.resolve(reply);
  }

  /** Tear the sandbox down now; the page starts a fresh one. `detail`: what it did,
   * for the page's diagnostic (a kill with a code). @param {Kill} reason @param {string} [detail] */
  function kill(reason, detail) {
    if (detail && reason.code !== null) dropped(reason.code, detail);
    detach();
    state = "none";
    restart(reason.name, generation);
    settle(killed(reason));
  }

  async function ready() {
    const deadline = performance.now() + BOOT_TIMEOUT_MS;
    let restarted = false;
    while (state !== "ready") {
      if (state === "failed") {
        if (restarted) throw new Error(`the sandbox failed to start: ${bootError}`);
        restarted = true;
        state = "none";
        restart(BOOT_ERROR, generation);
      }
      const left = deadline - performance.now();
      if (left <= 0) {
        kill(KILL.BOOT);
        throw new Error(`the sandbox did not start within ${BOOT_TIMEOUT_MS / 1000} s`);
      }
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, left);
        waiters.push(() => {
          clearTimeout(timer);
          resolve(undefined);
        });
      });
    }
  }

  return {
    attach,

    /** The generation of the sandbox now attached (a new one has an empty /work). */
    get generation() {
      return generation;
    },

    /** Call `fn(generation)` each time a sandbox becomes ready (the harness then copies
     * the workspace into it while it waits, off the next command's path). */
    watchReady(fn) {
      onReady = fn;
    },

    /** Wait until a sandbox is ready; resolves with its generation or {error}. */
    async ready() {
      try {
        await ready();
        return generation;
      } catch (err) {
        return { error: err.message };
      }
    },

    /**
     * Run one command line. `limits` is the shell's limits (harness/runtime/sandbox_shell.py);
     * `meta` the sync {full, dirs, removed, files: [path], sizes: [bytes]} and `packed`
     * the files' bytes one after another (in the order of meta.files: a PyProxy of
     * bytes, or a Uint8Array); `basis` the generation the sync was computed for.
     * `preload`: only the sync (the command is empty), which does not count as the
     * sandbox having run the model's code (it is not recycled for it). `gateCommand`:
     * with `limits.gate`, asked `(command text, argv) → Promise<refusal | undefined>`
     * before each simple command runs (the harness's permission rules).
     * Resolves with {stdout, stderr, exitCode, timedOut, changes: {dirs, removed,
     * skipped, paths, datas}} or {killed, why} (a KILL's) or {error} or {stale} (another sandbox is
     * attached: sync again, in full); never rejects for what the sandbox does.
     * @param {string} command
     * @param {{timeoutMs: number, maxCommands?: number, maxOutputBytes?: number, gate?: boolean} & Record<string, unknown>} limits
     * @param {{full: boolean, dirs: string[], removed: string[], files: string[], sizes: number[]}} meta
     * @param {any} packed @param {number} basis @param {boolean} [preload]
     * @param {((command: string, argv: string[]) => Promise<string | undefined>) | null} [gateCommand]
     */
    async run(command, limits, meta, packed, basis, preload = false, gateCommand = null) {
      // Before any await: Pyodide frees the proxy after the call.
      const bytes = typeof packed?.toJs === "function" ? packed.toJs() : new Uint8Array(packed ?? 0);
      let at = 0;
      const files = meta.files.map((path, i) => {
        const file = { path, at, size: meta.sizes[i] };
        at += meta.sizes[i];
        return file;
      });
      const pack = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes.buffer : bytes.slice().buffer;
      const sync = { full: meta.full, dirs: meta.dirs, removed: meta.removed, files, pack };
      try {
        // A cancelled command may still be stopping (at most CANCEL_GRACE_MS, then it is
        // killed and a fresh sandbox comes): the next one waits for it instead of failing.
        while (pending) await pending.ended;
        await ready();
      } catch (err) {
        return { error: err.message };
      }
      if (pending) return { error: "another command is running in the sandbox" };
      if (basis !== generation && !sync.full) return { stale: true };
      const nonce = newNonce();
      const restoring = installed.length > 0 && restoredIn !== generation && !restoreGaveUp;
      const ms = limits.timeoutMs + GRACE_MS;
      const first = restoring ? RESTORE_MS + ms : ms; // until `restored`, then `ms`
      if (!preload || command !== "") used = true;
      /** @type {(value?: unknown) => void} */
      let ended = () => {};
      const settled = new Promise((resolve) => (ended = resolve));
      const reply = new Promise((resolve) => {
        const timer = setTimeout(() => {
          if (pending?.restoring) {
            restoreGaveUp = true;
            dropped(CODE.SANDBOX_RESTORE, `installing ${installed.length} package(s) again took more than ${RESTORE_MS / 1000} s`);
          }
          kill(KILL.TIMEOUT);
        }, first);
        const finish = (value) => {
          ended();
          resolve(value);
        };
        pending = {
          nonce,
          generation,
          resolve: finish,
          timer,
          netCount: 0,
          messages: 0,
          gates: 0,
          maxGates: (limits.maxCommands ?? 0) + 10,
          paused: 0, // questions to the page in flight: the clocks stand still
          ms, // the command's own deadline (after `restored`)
          restoring,
          left: first, // of the deadline, at `since`
          since: performance.now(),
          gate: typeof gateCommand === "function" ? gateCommand : null,
          ended: settled,
        };
      });
      commandStarted({ generation, nonce, ms: first });
      const offered = { available: packages.available, installed: restoring ? installed : [] };
      port.postMessage({ type: "run", nonce, command, limits, sync, packages: offered }, [sync.pack]);
      return reply;
    },

    /** The run was cancelled: ask the command to stop, kill the sandbox if it does not. */
    cancel() {
      if (!pending || !port) return;
      port.postMessage({ type: "cancel", nonce: pending.nonce });
      clearTimeout(pending.timer);
      pending.timer = setTimeout(() => kill(KILL.CANCELLED), CANCEL_GRACE_MS);
    },

    /** A diagnostic for the page (e.g. sandbox_conflict: a newer write kept). */
    report(code, message) {
      dropped(String(code), String(message).slice(0, 500));
    },

    /** A run ended (the session's Runtime.run_ended, through the host's runEnded): a
     * sandbox that ran its code is replaced by a fresh one (once: a second call before
     * the next command does nothing). */
    recycle() {
      if (!used || pending) return false;
      used = false;
      kill(KILL.RECYCLED);
      return true;
    },

    close() {
      detach();
      state = "none";
    },
  };
}

/** A command's reply when its sandbox was torn down. @param {Kill} reason */
function killed(reason) {
  return { killed: reason.name, why: reason.why };
}

/** A network request from the sandbox as plain checked data, or why it is refused. */
function netRequest({ url, method, headers, body }) {
  if (typeof url !== "string" || url.length > 8192) return "the URL must be a string of at most 8192 characters";
  if (typeof method !== "string" || !/^[A-Z]{1,10}$/.test(method)) return "the method must be a word like GET";
  const entries = headers && typeof headers === "object" ? Object.entries(headers) : null;
  if (!entries || entries.length > 50 || !entries.every(([k, v]) => typeof v === "string" && k.length < 256 && v.length < 8192)) {
    return "headers must be at most 50 string values";
  }
  const bytes = body instanceof ArrayBuffer;
  if (
    body !== null
    && body !== undefined
    && !(typeof body === "string" && body.length <= MAX_NET_BODY)
    && !(bytes && body.byteLength <= MAX_NET_BYTES)
  ) {
    return `the body must be a string of at most ${MAX_NET_BODY} characters or at most ${MAX_NET_BYTES} bytes`;
  }
  return { url, method, headers: Object.fromEntries(entries), body: body ?? null };
}

/** Whether a request is a git push (smart HTTP's git-receive-pack: its ref list or its pack). */
function isPush({ url, method }) {
  try {
    const u = new URL(url);
    return (method === "POST" && u.pathname.endsWith("/git-receive-pack")) || u.searchParams.get("service") === "git-receive-pack";
  } catch {
    return false;
  }
}

/** A result from the sandbox (its fields checked by the table), as plain bounded data. */
function sanitize(message) {
  const text = (value) => value.slice(0, MAX_TEXT);
  if (typeof message.error === "string") return { error: text(message.error) };
  const { changes } = message;
  return {
    stdout: text(message.stdout),
    stderr: text(message.stderr),
    exitCode: message.exitCode,
    timedOut: message.timedOut === true,
    // Arrays, not JSON text: Python takes each list in one conversion, each file's
    // bytes in one copy (harness/runtime/pyodide.py, JsSandbox).
    changes: {
      dirs: changes.dirs,
      removed: changes.removed,
      skipped: changes.skipped,
      paths: changes.files.map((f) => f.path),
      datas: changes.files.map((f) => f.data),
    },
  };
}

/** What the sandbox may send (embed/shared/protocol.mjs, sandboxToHarness), and what each does. */
const FROM_SANDBOX = receiver(
  "sandboxToHarness",
  {
    ready: (c) => c.ready(),
    boot_error: (c, { message }) => c.bootFailed(message),
    result: (c, message) => c.result(message),
    net: (c, message) => c.net(message),
    pkg: (c, message) => c.pkg(message),
    gate: (c, message) => c.gate(message),
    restored: (c) => c.restored(),
  },
  {
    sandboxBooting: (c) => c.booting(),
    command: (c) => c.pending() !== null,
    ourNonce: (c, { nonce }) => nonce === c.pending()?.nonce,
  },
);

/** The sandbox's package index (dist/pyodide/, listed in sandbox-lock.json) as pip's
 * `packageFile`: one wheel from the bundle's origin (the browser's HTTP cache keeps it
 * for the next sandbox), or why not.
 * @param {string | URL} bundleBase @param {(url: URL) => Promise<any>} fetchJson
 * @returns {(file: string) => Promise<{error?: string, body?: ArrayBuffer}>} */
export function bundlePackageIndex(bundleBase, fetchJson) {
  let sandboxFiles = null; // Promise<Set<string>>: the wheels the sandbox's lock lists
  return async (file) => {
    try {
      if (sandboxFiles === null) {
        sandboxFiles = fetchJson(new URL("pyodide/sandbox-lock.json", bundleBase)).then(
          (lock) => new Set(Object.values(lock.packages || {}).map((p) => p.file_name)),
        );
        sandboxFiles.catch(() => (sandboxFiles = null));
      }
      if (!(await sandboxFiles).has(file)) return { error: `${file} is not in this bundle's package index` };
      const response = await fetch(new URL(`pyodide/${file}`, bundleBase));
      if (!response.ok) return { error: `GET ${file} answered ${response.status}` };
      return { body: await response.arrayBuffer() };
    } catch (err) {
      return { error: `the package index could not be read (${err instanceof Error ? err.message : String(err)})` };
    }
  };
}

const INSTALLED_FILE = "/state/packages.json"; // what pip installed, for the next sandbox

/** What pip installed in earlier sandboxes (kept in /state with the threads), and how to
 * keep the new list. @param {any} FS Pyodide's file system */
export function installedStore(FS) {
  let installed = [];
  try {
    const list = JSON.parse(FS.readFile(INSTALLED_FILE, { encoding: "utf8" }));
    installed = Array.isArray(list) ? list.filter((r) => typeof r === "string") : [];
  } catch {
    installed = [];
  }
  /** @param {string[]} list */
  const save = (list) => {
    try {
      FS.writeFile(INSTALLED_FILE, JSON.stringify(list));
    } catch (err) {
      // Only the next sandbox's reinstall is lost (pip list shows it); nothing to answer.
      console.warn(`[pyharness] the installed packages were not kept: ${err}`);
    }
  };
  return { installed, save };
}
