// The handle of one run (h.prompt): its events, async-iterable, and `done`.

export class Run {
  constructor(id, harness) {
    this.id = id;
    this._harness = harness;
    this._events = []; // its own events and its subagents', in arrival order
    this._seq = 0; // its own events so far (the next one's seq)
    this._waiters = [];
    this._ended = false;
    this.done = new Promise((resolve, reject) => {
      this._resolve = resolve;
      this._reject = reject;
    });
    this.done.catch(() => {}); // a run nobody awaits must not raise unhandled rejections
  }

  /** Take back what this run changed: `h.revert(run.id, opts)`. @param {{dryRun?: boolean, cascade?: boolean}} [opts] */
  revert(opts = {}) {
    return this._harness.revert(this.id, opts);
  }

  /** What this run changed: `h.diff(run.id)`. */
  diff() {
    return this._harness.diff(this.id);
  }

  /** Cancel this run; it ends with stop reason "aborted". */
  cancel() {
    this._cancelled = true; // a run still writing its attachments never starts
    if (!this._ended && !this._harness._closed) this._harness._worker.postMessage({ type: "cancel", runId: this.id });
  }

  /** One of its events, or one of its subagents' (their `runId` is another: nested). */
  _push(event) {
    this._events.push(event);
    if (event.runId !== this.id) return this._wake();
    this._seq++;
    if (event.type === "run_end") {
      this._ended = true;
      const error = this._events.find((e) => e.type === "error" && e.runId === this.id);
      this._resolve({
        text: event.text,
        stopReason: event.stopReason,
        ...(event.usage ? { usage: event.usage } : {}),
        ...(event.budget ? { budget: event.budget } : {}),
        ...(error ? { error: { code: error.code, message: error.message } } : {}),
      });
    }
    this._wake();
  }

  _fail(error) {
    if (this._ended) return;
    this._ended = true;
    this._error = error;
    this._reject(error);
    this._wake();
  }

  _wake() {
    for (const wake of this._waiters.splice(0)) wake();
  }

  async *[Symbol.asyncIterator]() {
    for (let i = 0; ; i++) {
      while (i >= this._events.length && !this._ended) await new Promise((r) => this._waiters.push(r));
      if (i < this._events.length) yield this._events[i];
      else if (this._error) throw this._error;
      else return;
    }
  }
}
