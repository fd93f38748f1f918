// `pyharness bench --snapshot-probe`: a Pyodide memory snapshot of the bundle's runtime
// (Python started, nothing of ours imported), made in Node with Pyodide's experimental
// `_makeSnapshot` / `makeMemorySnapshot`. Why only the runtime: docs/performance.md.
//   node snapshot.mjs <bundle>/pyodide <out file>
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";

const [index, out] = process.argv.slice(2).map((p) => `${resolve(p)}/`);
const { loadPyodide } = await import(`${index}pyodide.mjs`);
const pyodide = await loadPyodide({
  indexURL: index,
  lockFileURL: `${index}pyodide-lock.json`,
  packageBaseUrl: index,
  _makeSnapshot: true,
});
writeFileSync(out.slice(0, -1), pyodide.makeMemorySnapshot());
