// The page API's one error type (re-exported by pyharness.mjs), in its own module so
// that the page's other modules can throw it without importing pyharness.mjs.

/** An Error with a POSIX-style `code` (ENOENT, EACCES, ...). */
export class HarnessError extends Error {
  /** @param {string} code @param {string} message @param {string} [step] */
  constructor(code, message, step) {
    super(message);
    this.name = "HarnessError";
    this.code = code;
    if (step !== undefined) this.step = step;
  }
}
