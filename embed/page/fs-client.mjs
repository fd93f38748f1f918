// h.fs: the page's calls on the workspace, each a request to the worker.
import { HarnessError } from "./errors.mjs";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export class FileSystem {
  /** @param {{_request: (message: object, transfer?: Transferable[]) => Promise<any>}} harness the Harness @param {number} [call] the page tool call it belongs to */
  constructor(harness, call) {
    this._h = harness;
    this._call = call;
  }

  /**
   * @overload
   * @param {string} path
   * @returns {Promise<Uint8Array>}
   */
  /**
   * @overload
   * @param {string} path
   * @param {{encoding: "utf8" | "utf-8"} | "utf8" | "utf-8"} opts
   * @returns {Promise<string>}
   */
  /**
   * @param {string} path
   * @param {{encoding?: string} | string} [opts]
   * @returns {Promise<Uint8Array | string>}
   */
  async readFile(path, opts = {}) {
    const encoding = (typeof opts === "string" ? opts : opts?.encoding) ?? null;
    if (encoding !== null && encoding !== "utf8" && encoding !== "utf-8") {
      throw new HarnessError("EINVAL", `EINVAL: unsupported encoding '${encoding}'; use "utf8" or none for bytes`);
    }
    const { data } = await this._op({ op: "readFile", path });
    const bytes = new Uint8Array(data);
    return encoding === null ? bytes : decoder.decode(bytes);
  }

  async writeFile(path, data, opts = {}) {
    const bytes = ownBytes(data, "writeFile data");
    // The bytes are a copy of ours: transfer them instead of copying again.
    await this._op({ op: "writeFile", path, append: Boolean(opts?.append) }, bytes.buffer);
  }

  /** The whole workspace as a zip archive. @returns {Promise<Uint8Array>} */
  async exportZip() {
    return new Uint8Array((await this._op({ op: "exportZip" })).data);
  }

  /** Unpack a zip archive into /work (`replace`: empty /work first). Every entry is
   * checked before anything is written. @returns {Promise<{files: number, dirs: number}>} */
  async importZip(data, opts = {}) {
    const bytes = ownBytes(data, "importZip data");
    return (await this._op({ op: "importZip", replace: Boolean(opts?.replace) }, bytes.buffer)).value;
  }

  /** @returns {Promise<import("./pyharness.d.ts").DirEntry[]>} */
  async readdir(path) {
    return (await this._op({ op: "readdir", path })).value;
  }

  /** @returns {Promise<import("./pyharness.d.ts").Stat>} */
  async stat(path) {
    return (await this._op({ op: "stat", path })).value;
  }

  async mkdir(path, opts = {}) {
    await this._op({ op: "mkdir", path, recursive: Boolean(opts?.recursive) });
  }

  async rm(path, opts = {}) {
    await this._op({ op: "rm", path, recursive: Boolean(opts?.recursive), force: Boolean(opts?.force) });
  }

  async rename(from, to) {
    await this._op({ op: "rename", from, to });
  }

  _op(request, data) {
    /** @type {{type: "fs", request: string, data?: ArrayBuffer, call?: number}} */
    const message = { type: "fs", request: JSON.stringify(request) };
    if (data) message.data = data;
    if (this._call !== undefined) message.call = this._call;
    return this._h._request(message, data ? [data] : []);
  }
}

/** A fresh, transferable copy of `data` (a string is encoded as UTF-8). TypedArray.slice()
 * copies into a new ArrayBuffer, also from a SharedArrayBuffer (which cannot be
 * transferred itself); the caller's buffer is never detached. */
function ownBytes(data, what) {
  if (typeof data === "string") return encoder.encode(data);
  if (data instanceof ArrayBuffer || isShared(data)) return new Uint8Array(data).slice();
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength).slice();
  throw new HarnessError("EINVAL", `EINVAL: ${what} must be a string, an ArrayBuffer or a typed array`);
}

const isShared = (data) => typeof SharedArrayBuffer !== "undefined" && data instanceof SharedArrayBuffer;
