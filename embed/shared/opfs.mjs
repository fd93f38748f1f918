// The origin private file system (OPFS) as both the page and the harness worker see it:
// where the workspaces are, how a name is stored, and the Web Lock that marks one open.
// The worker writes a workspace (worker/persist.mjs); the page lists and deletes them
// (page/workspaces.mjs).

export const ROOT_DIR = "pyharness";

/** Why the store could not be opened (the boot fails with this step and message). */
export class StorageError extends Error {}

/** The Web Lock a workspace's worker holds for its life. */
export const lockName = (name) => `pyharness-workspace:${name}`;

// OPFS names may not contain "/" or "\" (MEMFS names may contain "\"): escape it, and "%".
export const encodeName = (name) => name.replace(/[%\\/]/g, (c) => `%${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
export const decodeName = (name) => name.replace(/%([0-9a-f]{2})/g, (_, hex) => String.fromCharCode(parseInt(hex, 16)));

/** The origin's OPFS root; a clear reason when there is none. */
export async function opfsRoot() {
  if (!globalThis.isSecureContext) {
    throw new Error("the page is not a secure context: serve it over https, or from localhost");
  }
  if (typeof navigator.storage?.getDirectory !== "function") {
    throw new Error("this browser has no navigator.storage.getDirectory");
  }
  return navigator.storage.getDirectory(); // may still refuse (e.g. storage blocked by the user)
}
