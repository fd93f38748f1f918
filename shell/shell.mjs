// The worker-side shell: just-bash over the worker's one filesystem (/work and /tmp),
// with python3/python backed by the same Pyodide. Bundled by `pyharness build` into
// shell.mjs, which the worker imports only when the page enables the shell.
import { Bash, defineCommand, getCommandNames } from "just-bash/browser";
import { WorkFs } from "./fs-adapter.mjs";

const latin1ToBytes = (s) => Uint8Array.from(s, (c) => c.charCodeAt(0));
const bytesText = (s) => new TextDecoder().decode(latin1ToBytes(s));

/**
 * @param {object} host
 * @param {object} host.FS Pyodide's FS
 * @param {(path: string) => string | undefined} host.resolve the jail (real path or undefined)
 * @param {Record<number, string>} host.errnoNames
 * @param {(request: string) => string} host.runPython runs `python3 ...` (JSON in, JSON out)
 * @param {{timeoutMs: number, maxCommands: number, maxOutputBytes: number}} limits
 */
export function createShell(host, limits) {
  const fs = new WorkFs(host.FS, host.resolve, host.errnoNames);
  let deadline = 0;
  const python = (name) =>
    defineCommand(name, async (args, ctx) => {
      const request = JSON.stringify({
        args,
        cwd: ctx.cwd,
        stdin: ctx.stdin ? bytesText(ctx.stdin) : "",
        timeoutMs: Math.max(0, deadline - performance.now()),
      });
      try {
        return JSON.parse(host.runPython(request));
      } finally {
        fs.forget();
      }
    });
  const bash = new Bash({
    fs,
    cwd: "/work",
    env: { HOME: "/work", TMPDIR: "/tmp", USER: "user", LANG: "C.UTF-8" },
    executionLimits: {
      maxCommandCount: limits.maxCommands,
      maxLoopIterations: limits.maxCommands,
      maxOutputSize: limits.maxOutputBytes,
      maxExecutionTimeMs: limits.timeoutMs,
    },
    customCommands: [python("python3"), python("python")],
  });
  let current = null; // the AbortController of the running command

  return {
    commands: [...new Set([...getCommandNames(), "python3", "python"])].sort(),

    /** Run one command line; resolves (never rejects) with {stdout, stderr, exitCode, timedOut}. */
    async run(command) {
      const controller = new AbortController();
      current = controller;
      fs.writeBudget = limits.maxOutputBytes;
      fs.forget();
      deadline = performance.now() + limits.timeoutMs;
      const timer = setTimeout(() => controller.abort("timeout"), limits.timeoutMs);
      try {
        const r = await bash.exec(command, { cwd: "/work", signal: controller.signal });
        const stdout = r.stdoutKind === "bytes" || r.stdoutEncoding === "binary" ? bytesText(r.stdout) : r.stdout;
        // 124 is a deadline (ours or just-bash's maxExecutionTimeMs) unless the run was cancelled.
        const timedOut = r.exitCode === 124 && controller.signal.reason !== "cancelled";
        return { stdout, stderr: r.stderr, exitCode: r.exitCode, timedOut };
      } catch (err) {
        return { stdout: "", stderr: `bash: ${err && err.message ? err.message : err}\n`, exitCode: 1, timedOut: false };
      } finally {
        clearTimeout(timer);
        if (current === controller) current = null;
      }
    },

    /** Abort the running command (run cancelled). */
    cancel() {
      current?.abort("cancelled");
    },
  };
}

// For `pyharness bench`: just-bash over its own in-memory filesystem, the shell's baseline.
export { Bash } from "just-bash/browser";
