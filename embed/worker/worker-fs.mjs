// The page's h.fs, h.threads and checkpoint requests in the harness worker (routed here by
// embed/worker/worker.mjs): a plain readFile or writeFile takes a fast path in JS (the
// jail, in Python, says where the file is), anything else goes to the session
// (harness/runtime/pyodide.py WorkerBridge); each reply leaves after what it changed is
// on disk (worker-outbox.mjs), or fails with the storage's code when it could not be saved.

import { fsRequest as wellFormed } from "../shared/protocol.mjs";
import { pythonMessage } from "./worker-boot.mjs";

/** @typedef {import("./worker-boot.mjs").WorkerState} WorkerState */

/** A reply to a call that changed files which could not all be saved: the call fails
 * with the storage's code (its change is kept in the session and retried). */
function unsaved(reply, failure, changed) {
  if (failure === null || !changed || reply.ok === false) return reply;
  return {
    ...reply,
    ok: false,
    code: failure.code,
    message: `${failure.code}: the change was made in this session but could not be saved: ${failure.message}`,
    data: undefined,
    value: undefined,
  };
}

/** An h.threads call, or (`kind` "checkpoint") an h.revert / h.diff call, or (`kind`
 * "usage") an h.usage / h.setBudget call: JSON in, JSON out, the reply after what it
 * changed is on disk (and after a revert's file_change events).
 * @param {WorkerState} state @param {{id: any, request: string}} message
 * @param {"threads" | "checkpoint" | "usage"} [kind] */
export function threadsRequest(state, { id, request }, kind = "threads") {
  const { bridge, store } = state;
  const before = store?.changes;
  let reply;
  if (bridge === null) reply = { ok: false, code: "EINVAL", message: "EINVAL: the harness is not ready" };
  else {
    try {
      reply = JSON.parse(bridge[kind](request));
    } catch (err) {
      reply = { ok: false, code: "EIO", message: `EIO: ${pythonMessage(err)}` };
    }
  }
  const changed = store?.changes !== before;
  state.out.afterFlush((failure) => state.post(unsaved({ type: `${kind}res`, id, ...reply }, failure, changed)));
}

/** One h.fs call: a fast path (readFileReply, writeFileReply) or Python's (fsReply),
 * the reply after what it changed is on disk. @param {WorkerState} state @param {any} message */
export function fsRequest(state, message) {
  const { bridge, journal, store } = state;
  const before = store?.changes;
  // What this call changes is the page's doing (harness/workspace/journal.py's cause).
  // (a page tool's call through its fs: that tool call's, announced when the call ends)
  const cause = journal?.cause ?? "";
  const captured = journal?.capture ?? false;
  const ofCall = message.call === undefined ? undefined : state.pageToolCalls.get(message.call)?.cause || undefined;
  // (a page tool call's changes are its run's: their pre-images go to its checkpoint)
  journal?.setCause(ofCall ?? pageCause(message), ofCall !== undefined && state.checkpointsOn);
  let reply;
  let transfer;
  try {
    // The fast paths take a request only when it is well-formed by the protocol's table
    // (FS_REQUESTS, pinned to fsops.py's models); anything else goes to Python.
    const fast = readFileReply(state, message) ?? writeFileReply(state, message);
    [reply, transfer] = fast ?? fsReply(state, message, ofCall !== undefined);
    if (fast && reply.ok && reply.value === null && ofCall === undefined) bridge?.announce(journal?.cause); // a written file
  } finally {
    journal?.setCause(cause, captured);
  }
  const changed = store?.changes !== before;
  state.out.afterFlush((failure) => {
    const sent = unsaved(reply, failure, changed);
    state.post(sent, sent === reply ? transfer : undefined);
  });
}

/** "page:<op>:<id>", the journal's cause for one h.fs call. */
function pageCause({ id, request }) {
  const op = typeof request === "string" ? /"op"\s*:\s*"(\w{1,20})"/.exec(request.slice(0, 200))?.[1] : undefined;
  return `page:${op ?? "fs"}:${id}`;
}

/** The hot path of h.fs: a plain readFile. The jail (Python) says where the file is and
 * the filesystem's readFile copies its bytes once, straight into the buffer the reply
 * transfers. Anything else, or any failure, returns undefined: then the request takes
 * the full path (fsReply), whose parser and error are the answer. */
function readFileReply({ readablePath, pyodide }, { id, request }) {
  if (readablePath === null || typeof request !== "string" || request.length > 4096 || !request.includes('"readFile"')) return undefined;
  try {
    const req = wellFormed(JSON.parse(request));
    if (req?.op !== "readFile") return undefined;
    const real = readablePath(req.path);
    if (typeof real !== "string") return undefined;
    const bytes = pyodide.FS.readFile(real);
    const buffer = bytes.byteLength === bytes.buffer.byteLength ? bytes.buffer : bytes.slice().buffer;
    return [{ type: "fsres", id, ok: true, data: buffer }, [buffer]];
  } catch {
    return undefined; // a directory, a missing file, ...: the full path explains it
  }
}

/** The other hot path: a plain writeFile. The jail (Python) says where it goes; the
 * filesystem takes the transferred buffer over (canOwn) instead of copying it into
 * Python and out again. Anything else, or any failure, returns undefined: then the
 * request takes the full path (fsReply), whose error is the answer. */
function writeFileReply({ writablePath, pyodide }, { id, request, data }) {
  if (
    writablePath === null
    || !(data instanceof ArrayBuffer)
    || typeof request !== "string"
    || request.length > 4096
    || !request.includes('"writeFile"')
  )
    return undefined;
  let real;
  try {
    const req = wellFormed(JSON.parse(request));
    if (req?.op !== "writeFile" || req.append !== false) return undefined;
    real = writablePath(req.path);
  } catch {
    return undefined;
  }
  if (typeof real !== "string") return undefined;
  const FS = pyodide.FS;
  // An existing file keeps its mode (as write_file does); a new one is 0644.
  try {
    FS.writeFile(real, new Uint8Array(data), { canOwn: true, mode: 0o644 });
  } catch {
    return undefined;
  }
  return [{ type: "fsres", id, ok: true, value: null }];
}

/** One request of the page's preview (embed/page/preview.mjs): a file it loads, read
 * under the model's rules (harness/preview.py), or a load's report. Changes nothing.
 * @param {WorkerState} state @param {{id: any, request: string}} message */
export function previewRequest({ bridge, post }, { id, request }) {
  const [reply, transfer] = pythonReply("previewres", id, bridge, () => bridge.preview(request));
  post(reply, transfer);
}

function fsReply({ bridge, journal }, { id, request, data }, ofCall = false) {
  return pythonReply("fsres", id, bridge, () =>
    bridge.fs(request, data instanceof ArrayBuffer ? new Uint8Array(data) : undefined, journal?.cause, ofCall),
  );
}

/** Python's answer to one request as the reply `type`, and what it transfers: a file's
 * bytes (`data`) or its JSON; the harness not ready yet, or Python failing, as an error.
 * @param {string} type @param {any} id @param {any} bridge @param {() => any} ask
 * @returns {[any, Transferable[]?]} */
function pythonReply(type, id, bridge, ask) {
  if (bridge === null) return [{ type, id, ok: false, code: "EINVAL", message: "EINVAL: the harness is not ready" }];
  let result;
  try {
    result = ask();
  } catch (err) {
    return [{ type, id, ok: false, code: "EIO", message: `EIO: ${pythonMessage(err)}` }];
  }
  if (typeof result === "string") return [{ type, id, ...JSON.parse(result) }];
  const bytes = result.toJs();
  result.destroy();
  return [{ type, id, ok: true, data: bytes.buffer }, [bytes.buffer]];
}
