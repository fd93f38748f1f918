// knip.jsonc's preprocessor (`npx knip`, make lint): takes out of knip's report exactly the
// unused exports that knip.jsonc's preprocessorOptions.pending names (file → export
// names): ones known and owned by someone else's change in flight, so the check is a gate
// for everything else meanwhile. A name that knip no longer reports fails the run, so the
// list can only shrink: delete the entry once its export is gone.

/**
 * @param {{ issues: { exports: Record<string, Record<string, unknown>> }, counters: { exports: number }, preprocessorOptions: string }} data
 * @returns {typeof data}
 */
export default function dropPending(data) {
  /** @type {{ pending?: Record<string, string[]> }} */
  const options = data.preprocessorOptions ? JSON.parse(data.preprocessorOptions) : {};
  const stale = [];
  for (const [file, names] of Object.entries(options.pending ?? {})) {
    const reported = data.issues.exports[file] ?? {};
    for (const name of names) {
      if (!(name in reported)) {
        stale.push(`${file}: ${name}`);
        continue;
      }
      delete reported[name];
      data.counters.exports--;
    }
    if (data.issues.exports[file] && Object.keys(reported).length === 0) delete data.issues.exports[file];
  }
  if (stale.length > 0) {
    throw new Error(`knip.jsonc's pending list names exports that are no longer reported unused; delete them from it: ${stale.join(", ")}`);
  }
  return data;
}
