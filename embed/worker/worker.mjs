// The module worker: boots Pyodide from the bundle, loads the wheels and the harness,
// then routes page messages to the Python session (harness/runtime/pyodide.py). It runs
// only our code: the model's commands run in the sandbox (sandbox-client.mjs), and its
// model requests go out through the page, which holds the key. Message shapes are
// documented in docs/protocol.md.
//
// This is the entry: the page's messages, routed by the protocol's table. The boot and
// the host Python calls are worker-boot.mjs, the page's h.fs and h.threads requests
// worker-fs.mjs, what goes back to the page worker-outbox.mjs; what they share is one
// object (`WorkerState`, worker-boot.mjs), made here.

import { CODE, receiver } from "../shared/protocol.mjs";
import { journalFeed } from "./journal.mjs";
import { boot, createState, watchLinks, whileTrusted } from "./worker-boot.mjs";
import { fsRequest, previewRequest, threadsRequest } from "./worker-fs.mjs";

const state = createState((message, transfer = []) => self.postMessage(message, transfer));

/** What the page may send (embed/shared/protocol.mjs, pageToWorker), and what each does. */
const FROM_PAGE = receiver(
  "pageToWorker",
  {
    init: (s, message) => void boot(s, message),
    fs: (s, message) => fsRequest(s, message),
    threads: (s, message) => threadsRequest(s, message), // JSON in, JSON out; the reply leaves after the flush
    checkpoint: (s, message) => threadsRequest(s, message, "checkpoint"),
    usage: (s, message) => threadsRequest(s, message, "usage"),
    preview: (s, message) => previewRequest(s, message),
    prompt: (s, { runId, text, attachments, mode, plan }) =>
      s.bridge.prompt(runId, text, JSON.stringify(attachments ?? []), JSON.stringify({ mode, plan })),
    cancel: (s, { runId }) => void s.bridge?.cancel(runId),
    fetch_head: (s, message) => s.http.onPageMessage(message),
    fetch_chunk: (s, message) => s.http.onPageMessage(message),
    fetch_end: (s, message) => s.http.onPageMessage(message),
    fetch_error: (s, message) => s.http.onPageMessage(message),
    toolres: (s, { id, ok, output, images }) => {
      const { resolve } = s.pageToolCalls.get(id);
      s.pageToolCalls.delete(id);
      resolve({ ok, output, images: JSON.stringify(Array.isArray(images) ? images : []) });
    },
    approvalres: (s, { id, decision, message }) => {
      const resolve = s.approvals.get(id);
      s.approvals.delete(id);
      resolve({ decision, message });
    },
    // a fresh sandbox from the page (at ready, after a restart or its deadline)
    sandbox_port: (s, { port, generation, reason }) => void s.sandbox.attach(port, generation, reason),
    netres: (s, message) => {
      // the page's answer to a network request of the model's code
      const resolve = s.netCalls.get(message.id);
      s.netCalls.delete(message.id);
      resolve(message);
    },
    // a raw round trip, the baseline of the benchmarks
    echo: (s, { id, data }) => s.post({ type: "echo", id, data }, data ? [data] : []),
    stats: (s, { id }) =>
      // diagnostics: the worker's memory (`pyharness bench`)
      s.post({
        type: "echo",
        id,
        wasmBytes: s.pyodide ? s.pyodide._module.HEAPU8.buffer.byteLength : 0,
        jsHeapBytes: /** @type {any} Chromium's, not standard */ (performance).memory?.usedJSHeapSize ?? null,
        linksTrusted: s.linksTrusted,
      }),
  },
  {
    ready: (s) => s.bridge !== null,
    toolPending: (s, { id }) => s.pageToolCalls.has(id),
    approvalPending: (s, { id }) => s.approvals.has(id),
    fetchOpen: (s, { id }) => s.http?.isOpen(id) === true,
    shell: (s) => s.sandbox !== null,
    netPending: (s, { id }) => s.netCalls.has(id),
  },
);

/** A message the worker cannot use: the page hears why (a quiet code: a late answer). */
function dropped({ code, reason }, message) {
  if (code === null) return;
  const about = message !== null && typeof message === "object" ? message : {};
  state.post({
    type: "protocol_error",
    code,
    id: about.id,
    runId: typeof about.runId === "string" ? about.runId : undefined,
    message: reason,
  });
}

self.onmessage = (event) => {
  const message = event.data;
  try {
    FROM_PAGE.receive(state, message, dropped);
  } catch (err) {
    dropped({ code: CODE.RECEIVER_FAILED, reason: `worker failed on '${message.type}': ${err}` }, message);
  }
};

// For the in-Pyodide tests (tests/test_journal.py, tests/test_jail.py): the journal's
// feed over their FS, and the jail's trust in the filesystem.
export { journalFeed, watchLinks, whileTrusted };
