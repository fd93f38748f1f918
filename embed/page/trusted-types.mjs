// The strings pyharness hands to a sink that Trusted Types guards, and the one policy
// that lets exactly those through. On a page that enforces Trusted Types
// (`require-trusted-types-for 'script'`) a sink refuses a plain string; the page lets
// pyharness in by listing its policies under `trusted-types`:
//   - `pyharness` (made here, once per page): the harness worker's script URL (its
//     worker.mjs, or the blob: module that imports it) and the sandbox frame's srcdoc;
//   - `pyharness-sandbox` (made in the sandbox frame, embed/sandbox/sandbox-frame.js):
//     the frame's `data:` URL of the sandbox worker.
// Without Trusted Types the same strings are used as they are.
import { FRAME_HASH, FRAME_SCRIPT } from "./sandbox-frame.mjs";

export const PAGE_POLICY = "pyharness";
export const FRAME_POLICY = "pyharness-sandbox";

// The sandbox frame's document: a CSP with no network and one inline script, pinned by
// its hash (embed/page/sandbox-host.mjs says why).
const SANDBOX_CSP = `default-src 'none'; script-src '${FRAME_HASH}' blob: 'wasm-unsafe-eval'; worker-src data:; base-uri 'none'; form-action 'none'`;
const FRAME_SRCDOC = `<!doctype html><meta http-equiv="Content-Security-Policy" content="${SANDBOX_CSP}"><script>${FRAME_SCRIPT}</script>`;

/** The blob: modules made by workerShim, until revoked: the only blob: URLs the policy takes. */
const shims = new Set();

/** @type {any} the `pyharness` TrustedTypePolicy; undefined until first asked, null when there is none */
let policy;
/** @type {string | null} why the page refused to let pyharness make its policy (null: made, or no Trusted Types) */
let refusal = null;

function pagePolicy() {
  if (policy !== undefined) return policy;
  policy = null;
  const factory = /** @type {any} */ (globalThis).trustedTypes;
  if (typeof factory?.createPolicy !== "function") return policy;
  try {
    policy = factory.createPolicy(PAGE_POLICY, {
      createScriptURL: (url) => {
        if (isWorkerScript(url)) return url;
        throw new TypeError(`pyharness: the ${PAGE_POLICY} policy makes only pyharness's worker URL, not ${url}`);
      },
      createHTML: (html) => {
        if (html === FRAME_SRCDOC) return html;
        throw new TypeError(`pyharness: the ${PAGE_POLICY} policy makes only the sandbox frame's document`);
      },
    });
  } catch (err) {
    refusal = String(err?.message ?? err);
  }
  return policy;
}

/** A bundle's worker.mjs (http or https), or a shim this module made. @param {string} url */
function isWorkerScript(url) {
  if (shims.has(url)) return true;
  try {
    const parsed = new URL(url);
    return ["http:", "https:"].includes(parsed.protocol) && parsed.pathname.endsWith("/worker.mjs");
  } catch {
    return false;
  }
}

/** Why pyharness has no policy on a page with Trusted Types (the page's `trusted-types`
 * directive does not list it, or it was made twice), or null. */
export function policyRefusal() {
  pagePolicy();
  return refusal;
}

/** The Worker constructor's argument for this script URL. @param {string} url */
export function workerScriptUrl(url) {
  return pagePolicy()?.createScriptURL(url) ?? url;
}

/** The sandbox frame's srcdoc. */
export function sandboxSrcdoc() {
  return pagePolicy()?.createHTML(FRAME_SRCDOC) ?? FRAME_SRCDOC;
}

/**
 * A same-origin blob: module whose only content imports `workerUrl` (absolute), for a
 * bundle on another origin: a worker must come from the page's origin, a module it
 * imports need not (it needs CORS). The real module resolves its own imports against
 * its own URL. Revoke it once the worker started.
 * @param {string} workerUrl
 * @returns {{url: string, revoke: () => void}}
 */
export function workerShim(workerUrl) {
  const url = URL.createObjectURL(new Blob([`import ${JSON.stringify(workerUrl)};\n`], { type: "text/javascript" }));
  shims.add(url);
  return {
    url,
    revoke: () => {
      shims.delete(url);
      URL.revokeObjectURL(url);
    },
  };
}
