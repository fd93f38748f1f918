// What the harness worker sends the page, in order (embed/worker/worker.mjs): after a
// change, nothing leaves before the change is on disk (the durability contract), so
// replies and events are queued, each sent after any pending flush of the workspace's
// store (persist.mjs); file_change events go in batches.

/** A command that changes 10,000 files is a few messages, not 10,000: the page's thread
 * pays per message. */
const MAX_CHANGES_PER_MESSAGE = 500;

/**
 * @param {(message: any, transfer?: Transferable[]) => void} post to the page
 * @param {() => any} store the workspace's store (persist.mjs), or null before boot
 */
export function createOutbox(post, store) {
  let outgoing = Promise.resolve(); // replies and events leave in order, after a flush
  /** Tell the page when saving to OPFS starts failing (h.storage.error) and when it works
   * again; the changes stay in the session and are retried at every later flush. */
  let storageFailure = null;
  /** file_change events waiting to go in one `file_changes` message (null: none open).
   * The batch closes when its turn comes (it is then flushed and sent) or when any
   * other message is queued (a later change goes after that message). */
  let changeBatch = null;

  function reportStorage(failure) {
    const s = store();
    if (s?.kind !== "opfs" || (failure === null && (storageFailure === null || s.dirty()))) return;
    if (failure?.code === storageFailure?.code) return;
    storageFailure = failure;
    post({ type: "storage", error: failure });
  }

  async function flush() {
    const s = store();
    return s?.dirty() ? await s.flush() : null;
  }

  /** Queue `fn` behind everything queued before. */
  function enqueue(fn) {
    changeBatch = null; // a file change after this message goes after it
    outgoing = outgoing.then(fn).catch((err) => console.error("pyharness: could not send a reply", err));
  }

  /** Queue `send(failure)` to run once what changed is on disk (failure: null, or why
   * the store could not save it). */
  function afterFlush(send) {
    enqueue(async () => {
      const failure = await flush();
      reportStorage(failure);
      send(failure);
    });
  }

  function fileChange(event) {
    if (changeBatch === null) {
      const batch = [];
      enqueue(async () => {
        if (changeBatch === batch) changeBatch = null; // what comes from now on: a new batch
        const failure = await flush();
        reportStorage(failure);
        post({ type: "file_changes", events: batch });
      });
      changeBatch = batch;
    }
    changeBatch.push(event);
    // A bounded message: the page handles each one in a task, and its timers run between.
    if (changeBatch.length >= MAX_CHANGES_PER_MESSAGE) changeBatch = null;
  }

  /** One event of the session (Python's runtime.post). A file_change is not a run's
   * numbered event (it also comes of page calls): its own message (batched), sent once
   * the change is saved, before the reply or tool_end it goes with. Only tool_end and
   * run_end promise durability; the rest only keep their order. */
  function event(event) {
    if (event.type === "file_change") fileChange(event);
    else if (event.type === "tool_end" || event.type === "run_end") afterFlush(() => post({ type: "event", event }));
    else enqueue(() => post({ type: "event", event }));
  }

  return { enqueue, afterFlush, event };
}
