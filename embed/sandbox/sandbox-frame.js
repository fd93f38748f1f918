// The sandbox frame's only script, inline in its srcdoc and pinned by its sha256 in the
// frame's CSP (the build writes the hash into dist/sandbox-frame.mjs). It accepts one
// message from its parent: the Pyodide files, the sandbox module and a MessagePort to
// the harness worker; starts the sandbox as a `data:` module worker (it inherits this
// frame's opaque origin and CSP) and forwards the worker's first report (ready or
// boot_error) to the page. Nothing the sandbox says later reaches the page.
//
// As a srcdoc frame it is under the page's CSP too: on a page that enforces Trusted Types
// its worker's URL goes through its own policy, `pyharness-sandbox`, which the page lists
// under `trusted-types` (embed/page/trusted-types.mjs has the page's).
(() => {
  const LOADER = `onmessage = async (event) => {
  onmessage = null;
  const { files, port, probeUrl } = event.data;
  try {
    const sandbox = await import(URL.createObjectURL(files["sandbox.mjs"]));
    await sandbox.start({ files, port, probeUrl, report: (m) => postMessage(m) });
  } catch (err) {
    const failed = { type: "boot_error", message: String((err && err.message) || err) };
    port.postMessage(failed);
    postMessage(failed);
  }
};`;
  const WORKER_URL = `data:text/javascript,${encodeURIComponent(LOADER)}`;
  const POLICY = "pyharness-sandbox";
  /** @type {any} */
  let policy = null;
  let refusal = "";
  try {
    policy = /** @type {any} */ (self).trustedTypes?.createPolicy(POLICY, {
      createScriptURL: (/** @type {string} */ url) => {
        if (url === WORKER_URL) return url;
        throw new TypeError(`the ${POLICY} policy makes only the sandbox worker's URL`);
      },
    });
  } catch (err) {
    refusal = ` (${String(err?.message || err)})`;
  }
  /** @type {Worker | null} */
  let worker = null;
  const report = (message) => parent.postMessage(message, "*");
  addEventListener("message", (event) => {
    const data = event.data;
    // The one message it takes (embed/shared/protocol.mjs, pageToFrame): boot, once.
    if (event.source !== parent || worker !== null || !data || data.type !== "boot" || !(data.port instanceof MessagePort)) return;
    let started;
    try {
      started = new Worker(policy ? policy.createScriptURL(WORKER_URL) : WORKER_URL, { type: "module", name: "pyharness-sandbox" });
    } catch (err) {
      const text = String(err?.message || err);
      const trusted = /trusted/i.test(text) || refusal !== "";
      const failed = {
        type: "boot_error",
        message: trusted
          ? `the page enforces Trusted Types: add "${POLICY}" to its trusted-types directive, beside "pyharness" (the sandbox frame could not start its worker: ${text}${refusal})`
          : `the sandbox frame could not start its worker: ${text}`,
      };
      data.port.postMessage(failed); // the harness worker waits on it: it fails now, not at its deadline
      report(failed);
      return;
    }
    worker = started;
    started.onmessage = (e) => {
      started.onmessage = null;
      const { type, ms, probes, message } = e.data || {};
      report({ type: type === "ready" ? "ready" : "boot_error", ms, probes, message });
    };
    started.onerror = (e) => {
      e.preventDefault();
      report({ type: "boot_error", message: e.message || "the sandbox worker failed to start" });
    };
    started.postMessage({ files: data.files, port: data.port, probeUrl: data.probeUrl }, [data.port]);
  });
  report({ type: "frame_ready" });
})();
