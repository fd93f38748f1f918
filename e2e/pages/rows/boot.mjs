// The page code of e2e/test_boot.py's rows, on e2e/pages/index.html; called from Python by
// e2e/conftest.py's call(). Each returns JSON values for the row's assertions, which stay
// in Python.

/** The page's helpers (index.html): boot with the scripted model, settle a promise into {ok, ...}. */
const { boot, settle } = window;

/** Every progress report of one boot, and the versions the harness gives. */
export async function progressAndVersions() {
  const steps = [];
  const h = await boot({ onProgress: (p) => steps.push(p) });
  const versions = h.versions;
  h.close();
  return { steps, versions };
}

/** A boot with these options, settled into {ok, value} or {ok: false, code, message, name}. */
export const settleBoot = (options) => settle(boot(options));
