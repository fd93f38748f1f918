// Starting the harness worker, and saying why it did not start. The browser says little:
// the Worker constructor throws a SecurityError (a script of another origin, a page's
// CSP) or a TypeError (Trusted Types), and a script that does not load (missing, the
// wrong type, refused by the page's CSP or its Cross-Origin-Embedder-Policy) gives an
// `error` event with no message at all. So the page gathers what it can see (its origin,
// whether it is isolated, its CSP violations while the worker starts, and after a
// failure one fetch of worker.mjs) and `startFailure` / `loadFailure` turn that into the
// cause and its fix. Both are pure: tests/js-unit/worker-start.test.mjs.
//
// A bundle on another origin starts from a same-origin blob: module that imports it
// (trusted-types.mjs, workerShim): a worker's script must be of the page's origin, a
// module it imports need not be, if it is served with CORS.
import { HarnessError } from "./errors.mjs";
import { FRAME_POLICY, PAGE_POLICY, policyRefusal, workerScriptUrl, workerShim } from "./trusted-types.mjs";

/**
 * What the page knows about a worker start.
 * @typedef {object} StartFacts
 * @property {string} workerUrl the bundle's worker.mjs
 * @property {string} pageOrigin the page's origin ("null": opaque, as in `<iframe sandbox>`)
 * @property {boolean} shim started from a blob: module (the bundle is on another origin)
 * @property {boolean} isolated the page is cross-origin isolated (COOP and COEP)
 * @property {boolean} shell the shell is on (its sandbox frame makes a policy too)
 * @property {string | null} policyRefused why the page refused the `pyharness` policy, or null
 * @property {{directive: string, blockedURI: string}[]} violations the page's CSP violations meanwhile
 */

/**
 * What one fetch of worker.mjs gave, after the worker did not load.
 * @typedef {{error: string} | {status: number, contentType: string, coep: string | null}} Probe
 */

const MAX_VIOLATIONS = 20;
/** The directives that decide whether a worker may start (worker-src falls back to these). */
const WORKER_DIRECTIVES = new Set(["worker-src", "child-src", "script-src", "script-src-elem", "default-src"]);

/**
 * Start the module worker of the bundle at `workerUrl`.
 * @param {URL} workerUrl
 * @param {{shell: boolean}} options
 * @returns {{worker: Worker, failure: (event: Event) => Promise<HarnessError>, stop: () => void}}
 *   `failure`: the EBOOT of the worker's `error` event while it boots; `stop`: the boot
 *   ended (the worker spoke, or failed, or the harness closed)
 * @throws {HarnessError} EBOOT, when the browser refuses to make the worker
 */
export function startWorker(workerUrl, { shell }) {
  // self.origin, not location.origin: in an <iframe sandbox> the first is "null", the
  // second the URL's, which the frame is not of.
  const pageOrigin = globalThis.origin ?? globalThis.location?.origin ?? "null";
  const shim = workerUrl.origin !== pageOrigin ? workerShim(workerUrl.href) : null;
  /** @type {StartFacts["violations"]} */
  const violations = [];
  const record = (/** @type {SecurityPolicyViolationEvent} */ event) => {
    if (violations.length < MAX_VIOLATIONS) violations.push({ directive: event.effectiveDirective, blockedURI: event.blockedURI });
  };
  globalThis.document?.addEventListener("securitypolicyviolation", record);
  const stop = () => {
    globalThis.document?.removeEventListener("securitypolicyviolation", record);
    shim?.revoke();
  };
  /** @returns {StartFacts} */
  const facts = () => ({
    workerUrl: workerUrl.href,
    pageOrigin,
    shim: shim !== null,
    isolated: globalThis.crossOriginIsolated === true,
    shell,
    policyRefused: policyRefusal(),
    violations,
  });
  /** @type {Worker} */
  let worker;
  try {
    worker = new Worker(workerScriptUrl(shim?.url ?? workerUrl.href), { type: "module", name: "pyharness" });
  } catch (err) {
    stop();
    throw bootError(startFailure(err, facts()));
  }
  // The worker loaded once it speaks: its blob: module (if any) and the watch can go.
  worker.addEventListener("message", stop, { once: true });
  const failure = async (/** @type {Event} */ event) => {
    const message = /** @type {ErrorEvent} */ (event).message;
    const probe = message ? null : await probeScript(workerUrl.href);
    stop();
    return bootError(message ? `${workerUrl.href} stopped with an error: ${message}` : loadFailure(facts(), probe));
  };
  return { worker, failure, stop };
}

/** @param {string} cause */
const bootError = (cause) => new HarnessError("EBOOT", `pyharness failed to start at step 'worker': ${cause}`, "worker");

/**
 * One GET of worker.mjs, to tell a missing file from a refused one.
 * @param {string} url
 * @returns {Promise<Probe>}
 */
async function probeScript(url) {
  let probe;
  try {
    const response = await fetch(url, { cache: "no-store", credentials: "same-origin" });
    void response.body?.cancel();
    probe = {
      status: response.status,
      contentType: response.headers.get("content-type") ?? "",
      coep: response.headers.get("cross-origin-embedder-policy"),
    };
  } catch (err) {
    probe = { error: String(/** @type {any} */ (err)?.message ?? err) };
  }
  await new Promise((resolve) => setTimeout(resolve, 0)); // a CSP violation of the probe is told by now
  return probe;
}

/** The policy names a page that enforces Trusted Types lists. @param {StartFacts} facts */
const policyNames = (facts) => (facts.shell ? `${PAGE_POLICY} ${FRAME_POLICY}` : PAGE_POLICY);

/** What the page's CSP must allow in worker-src: the script, and for a bundle of another
 * origin the blob: module too (a worker's static imports load as worker scripts).
 * @param {StartFacts} facts */
function scriptSource(facts) {
  const origin = new URL(facts.workerUrl).origin;
  if (facts.shim) return `blob: and ${origin}`;
  return origin === facts.pageOrigin ? "'self'" : origin;
}

// Chromium refuses such a page a worker of any origin but its own, and a module worker
// from a blob: as well.
const OPAQUE_ORIGIN =
  "the page has an opaque origin (an <iframe sandbox> without allow-same-origin), where the browser starts neither a worker of the bundle's origin nor one from a blob: module: add allow-same-origin to the frame's sandbox attribute";

/**
 * The cause and the fix, when the Worker constructor threw `err`.
 * @param {any} err @param {StartFacts} facts @returns {string}
 */
export function startFailure(err, facts) {
  const name = String(err?.name ?? "Error");
  const text = String(err?.message ?? err);
  if (name === "TypeError" && (facts.policyRefused !== null || /trusted/i.test(text))) {
    const why =
      facts.policyRefused !== null
        ? `its trusted-types directive does not allow pyharness's policy (${facts.policyRefused})`
        : `its Trusted Types refused the worker's URL (${text})`;
    return `the page enforces Trusted Types and ${why}: add "${policyNames(facts)}" to the page's trusted-types directive (Content-Security-Policy: require-trusted-types-for 'script'; trusted-types ${policyNames(facts)})`;
  }
  if (/content security policy/i.test(text)) {
    return `the page's Content-Security-Policy refused the worker (${text}): allow ${scriptSource(facts)} in worker-src (or in script-src, if there is no worker-src)`;
  }
  if (facts.pageOrigin === "null") return OPAQUE_ORIGIN;
  if (name === "SecurityError" && new URL(facts.workerUrl).origin !== facts.pageOrigin) {
    return `the bundle is on another origin (${new URL(facts.workerUrl).origin}) and the browser refused it as a worker (${text}): serve it with Access-Control-Allow-Origin, or from the page's origin`;
  }
  return `the browser refused to start ${facts.workerUrl} as a worker (${name}: ${text})`;
}

/**
 * The cause and the fix, when the worker's script did not load (its `error` event, which
 * carries no message) and a fetch of it then gave `probe`.
 * @param {StartFacts} facts @param {Probe | null} probe @returns {string}
 */
export function loadFailure(facts, probe) {
  const { workerUrl } = facts;
  const origin = new URL(workerUrl).origin;
  const refused = facts.violations.find((v) => WORKER_DIRECTIVES.has(v.directive));
  if (refused) {
    const because = facts.shim ? " (pyharness starts a bundle of another origin from a blob: module of the page's, which imports it)" : "";
    return `the page's Content-Security-Policy refused the worker (${refused.directive} does not allow ${refused.blockedURI || workerUrl}): allow ${scriptSource(facts)} in worker-src${because}`;
  }
  if (facts.pageOrigin === "null") return OPAQUE_ORIGIN;
  if (probe === null || "error" in probe) {
    if (facts.violations.some((v) => v.directive === "connect-src")) {
      return `${workerUrl} did not load, and the page's Content-Security-Policy (connect-src) kept pyharness from fetching it to see why: allow ${origin} in connect-src and script-src, and ${scriptSource(facts)} in worker-src`;
    }
    if (facts.shim) {
      return `the bundle is on another origin (${origin}) and ${workerUrl} could not be fetched from this page (${probe?.error ?? "no response"}): it must be served with Access-Control-Allow-Origin (e.g. *), as every file of the bundle; or serve the bundle from the page's origin`;
    }
    return `could not fetch ${workerUrl} (${probe?.error ?? "no response"}): check the baseUrl option and that the bundle is served`;
  }
  if (probe.status < 200 || probe.status > 299) {
    return `GET ${workerUrl} answered ${probe.status}: check the baseUrl option and that the whole directory \`pyharness build\` writes is served there`;
  }
  if (!/javascript/i.test(probe.contentType)) {
    return `${workerUrl} is served as ${JSON.stringify(probe.contentType || "no Content-Type")}: a module worker must be served as text/javascript`;
  }
  if (facts.shim) {
    // The browser tells the worker, not the page, of a CSP violation in the worker.
    return `the worker could not import ${workerUrl} from another origin: a worker started from a blob: module follows the page's Content-Security-Policy, whose worker-src (or script-src, without one) must allow ${origin} as well as blob: (a worker's imports load as worker scripts), and every file of the bundle must be served with Access-Control-Allow-Origin`;
  }
  if (facts.isolated && probe.coep === null) {
    return `the page is cross-origin isolated and ${workerUrl} came without a Cross-Origin-Embedder-Policy header, so the browser refused it as the page's worker: serve worker.mjs with Cross-Origin-Embedder-Policy: require-corp (or credentialless, as the page), as \`pyharness serve --isolate\` does`;
  }
  return `the browser did not run ${workerUrl} as a module worker and gave no reason (it is served, as ${probe.contentType}); if the page sends Cross-Origin-Embedder-Policy, worker.mjs needs that header too, and the page's Content-Security-Policy must allow ${scriptSource(facts)} in worker-src: the browser's console names the cause`;
}
