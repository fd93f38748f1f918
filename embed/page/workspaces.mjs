// The page's view of the stored workspaces: list them, delete one that is not open.

import { decodeName, encodeName, lockName, opfsRoot, ROOT_DIR, StorageError } from "../shared/opfs.mjs";

/** The workspaces this origin has in OPFS, and deleting one (from the page). */
export async function listWorkspaces() {
  let root;
  try {
    root = await opfsRoot();
  } catch {
    return []; // no OPFS: no stored workspaces
  }
  const dir = await root.getDirectoryHandle(ROOT_DIR, { create: true });
  const held = new Set(((await navigator.locks.query()).held ?? []).map((l) => l.name));
  const out = [];
  for await (const [encoded, handle] of dir.entries()) {
    if (handle.kind !== "directory") continue;
    const name = decodeName(encoded);
    out.push({ name, open: held.has(lockName(name)) });
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

export async function deleteWorkspace(name) {
  const root = await opfsRoot();
  const dir = await root.getDirectoryHandle(ROOT_DIR, { create: true });
  // Take the lock ourselves: a workspace open somewhere is not deleted under it.
  const done = await navigator.locks.request(lockName(name), { ifAvailable: true }, async (lock) => {
    if (lock === null) return false;
    try {
      await dir.removeEntry(encodeName(name), { recursive: true });
    } catch (err) {
      if (err.name !== "NotFoundError") throw err;
    }
    return true;
  });
  if (!done) throw new StorageError(`the workspace '${name}' is open; close its harness first`);
}
