// The sandbox frame's only script, inline in its srcdoc and pinned by its sha256 in the
// frame's CSP (the build writes the hash into dist/sandbox-frame.mjs). It accepts one
// message from its parent: the Pyodide files, the sandbox module and a MessagePort to
// the harness worker; starts the sandbox as a `data:` module worker (it inherits this
// frame's opaque origin and CSP) and forwards the worker's first report (ready or
// boot_error) to the page. Nothing the sandbox says later reaches the page.
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
  /** @type {Worker | null} */
  let worker = null;
  const report = (message) => parent.postMessage(message, "*");
  addEventListener("message", (event) => {
    const data = event.data;
    // The one message it takes (embed/shared/protocol.mjs, pageToFrame): boot, once.
    if (event.source !== parent || worker !== null || !data || data.type !== "boot" || !(data.port instanceof MessagePort)) return;
    const started = new Worker(`data:text/javascript,${encodeURIComponent(LOADER)}`, { type: "module", name: "pyharness-sandbox" });
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
