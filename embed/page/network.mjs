// The network for the model's code (`createHarness({network})`), decided on the page.
//
// The sandbox has no network at all; `curl` and python3's `pyharness_net.fetch` ask the
// harness, which asks the page. Here a request must match an allowed origin plus path
// prefix and method; it goes out with the platform's own fetch (never the page's `fetch`
// option, which may add the page's credentials: a CSRF header, an SSO token, cookies),
// without cookies, referrer or any header of the page except the per-origin `headers`
// the page set for this purpose, follows no redirect (the browser hides a redirect's
// target, so it could not be checked again), and its response is capped. At most
// MAX_IN_FLIGHT requests run at once per command, and every request of a command is
// aborted when that command ends. Everything else gets a reason the model can act on;
// nothing here rejects.

const MIB = 1024 * 1024;
const MAX_INDEXES = 10; // packages.indexUrls
const INDEX_MAX_BYTES = 64 * MIB; // a wheel or an index page from an allowed package index
export const MAX_IN_FLIGHT = 6; // requests of one command at once
const REQUEST_TIMEOUT_MS = 30_000;
// The platform's fetch as it was when this module loaded, before any page code of ours
// ran: the model's requests never go through a function the page handed us.
const platformFetch = globalThis.fetch.bind(globalThis);
// Ambiguous path separators and dot segments that could make a prefix check lie.
const AMBIGUOUS = /%2f|%5c|%2e|\\|;/i;

/**
 * @param {{allow: string[], methods?: string[], maxResponseBytes?: number, indexes?: string[]} | null | undefined} options
 *   the option as the worker gets it (no header values); `indexes`: the package indexes
 *   the page allows (`packages.indexUrls`), whose origins may be read (GET, HEAD) too
 * @param {Record<string, Record<string, string>>} [originHeaders] the page's per-origin
 *   headers (`network.headers`), which never leave the page
 * @param {typeof fetch} [fetchImpl] the platform fetch (a test may pass another)
 * @param {{auth?: GitAuth | null, corsProxy?: string | null}} [git] the page's `git`
 *   option: `auth`, credentials for a git remote's smart-HTTP requests (gitEndpoint),
 *   asked for each, never leaving the page; `corsProxy`, where those requests go instead
 *   (`<proxy>/<host>/<path>`, for a git host that sends no CORS headers)
 */
export function createNetwork(options, originHeaders = {}, fetchImpl = platformFetch, git = {}) {
  const gitAuth = git.auth ?? null;
  const corsProxy = git.corsProxy ? git.corsProxy.replace(/\/+$/, "") : null;
  if (options === undefined || options === null) return null;
  const indexes = new Set((options.indexes ?? []).map((entry) => new URL(entry).origin));
  const allow = options.allow.map((entry) => {
    const url = new URL(entry);
    return { origin: url.origin, path: url.pathname };
  });
  const added = new Map(
    Object.entries(originHeaders).map(([origin, headers]) => [
      new URL(origin).origin,
      Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v])),
    ]),
  );
  const methods = new Set(options.methods ?? ["GET", "HEAD"]);
  const maxBytes = options.maxResponseBytes ?? 10 * MIB;
  const allowed = [...options.allow, ...(options.indexes ?? [])].join(", ") || "nothing"; // for refusals

  /** Is `url` on an allowed package index's origin, read only? */
  function onIndex(url, method) {
    try {
      return indexes.has(new URL(url).origin) && (method === "GET" || method === "HEAD");
    } catch {
      return false;
    }
  }

  /** Why `url` may not be fetched with `method`, or null when it may. */
  function refusal(url, method) {
    let parsed;
    try {
      parsed = new URL(url);
    } catch {
      return `not a URL: ${url.slice(0, 200)}`;
    }
    if (parsed.username || parsed.password) return "URLs with credentials are not allowed";
    if (AMBIGUOUS.test(parsed.pathname)) return "the path has encoded separators or dot segments";
    if (onIndex(url, method)) return null;
    // A git remote's smart-HTTP requests (git's own POSTs included) on an allowed URL.
    if (!methods.has(method) && gitEndpoint(url, method) === null)
      return `the method ${method} is not allowed (allowed: ${[...methods].join(", ")})`;
    const ok = allow.some(
      ({ origin, path }) =>
        parsed.origin === origin
        && (path === "/"
          || parsed.pathname === path.replace(/\/$/, "")
          || parsed.pathname.startsWith(path.endsWith("/") ? path : `${path}/`)),
    );
    return ok ? null : `${parsed.origin}${parsed.pathname} is not in the allowed network (${allowed})`;
  }

  /** The request's headers: the model's, with the page's for that origin on top, and
   * for a git remote's smart-HTTP request the page's `git.auth` answer on top of those. */
  async function headersFor(url, method, headers) {
    const own = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
    const out = { ...own, ...(added.get(new URL(url).origin) ?? {}) };
    /** @type {string[]} the secrets added here: a response holding one is refused */
    const secrets = [];
    if (gitAuth === null || gitEndpoint(url, method) === null) return { headers: out, secrets };
    const answer = await gitAuth(url);
    if (answer === null || answer === undefined) return { headers: out, secrets };
    if (typeof answer.username === "string" || typeof answer.password === "string") {
      const pair = new TextEncoder().encode(`${answer.username ?? ""}:${answer.password ?? ""}`);
      const encoded = btoa(String.fromCharCode(...pair));
      out.authorization = `Basic ${encoded}`;
      secrets.push(encoded, answer.password ?? "");
    }
    for (const [name, value] of Object.entries(answer.headers ?? {})) {
      if (typeof value !== "string") continue;
      out[name.toLowerCase()] = value;
      secrets.push(value.replace(/^(Basic|Bearer|token)\s+/i, ""));
    }
    return { headers: out, secrets: secrets.filter((v) => v.length >= 4) };
  }

  /** Whether the response's headers or body hold one of the secrets (as sent). */
  function holds(response, bytes, secrets) {
    if (secrets.length === 0) return false;
    const text = [...response.headers].map(([k, v]) => `${k}: ${v}`).join("\n") + new TextDecoder("latin1").decode(bytes);
    return secrets.some((secret) => text.includes(secret));
  }

  async function readCapped(response, maxBytes) {
    const chunks = [];
    let size = 0;
    if (response.body) {
      const reader = response.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        size += value.byteLength;
        if (size > maxBytes) {
          reader.cancel().catch(() => {});
          return `the response is larger than ${maxBytes} bytes (maxResponseBytes)`;
        }
        chunks.push(value);
      }
    }
    const bytes = new Uint8Array(size);
    let at = 0;
    for (const chunk of chunks) {
      bytes.set(chunk, at);
      at += chunk.byteLength;
    }
    return bytes;
  }

  return {
    allow: [...options.allow, ...(options.indexes ?? [])],

    /**
     * One request: resolves with {error} or {status, statusText, headers, body, url};
     * never rejects (a body that breaks half-way, an abort: an error for the model).
     * @param {{url: string, method: string, headers: Record<string, string>, body: string | ArrayBuffer | null}} request
     * @param {AbortSignal} [signal] the command's: aborted when the command ends
     */
    async fetch({ url, method, headers, body }, signal) {
      const why = refusal(url, method);
      if (why !== null) return { error: `network: ${why}` };
      const timeout = AbortSignal.timeout(REQUEST_TIMEOUT_MS);
      const stop = signal ? AbortSignal.any([signal, timeout]) : timeout;
      let response;
      let sent = { headers: {}, secrets: /** @type {string[]} */ ([]) };
      try {
        sent = await headersFor(url, method, headers);
        stop.throwIfAborted(); // (the command may have ended while git.auth answered)
        // A remote's request through the page's CORS proxy, if it set one: the rules
        // above were checked on the remote's own URL.
        const target = corsProxy && gitEndpoint(url, method) !== null ? `${corsProxy}/${url.replace(/^https?:\/\//, "")}` : url;
        response = await fetchImpl(target, {
          method,
          headers: sent.headers,
          body: body ?? undefined,
          credentials: "omit",
          redirect: "error",
          referrerPolicy: "no-referrer",
          // A package index's files may come from the browser's cache (the next sandbox
          // installs them again); nothing else is cached.
          cache: onIndex(url, method) ? "default" : "no-store",
          signal: stop,
        });
      } catch (err) {
        if (signal?.aborted) return { error: `network: ${method} ${url} was aborted (its command ended)` };
        return {
          error: `network: ${method} ${url} failed (${err?.message ? err.message : err}; redirects are not followed, and a server of another origin must allow CORS)`,
        };
      }
      let bytes;
      try {
        bytes = await readCapped(response, onIndex(url, method) ? Math.max(maxBytes, INDEX_MAX_BYTES) : maxBytes);
      } catch (err) {
        const why = signal?.aborted
          ? "its command ended"
          : timeout.aborted
            ? `no answer within ${REQUEST_TIMEOUT_MS / 1000} s`
            : err?.message
              ? err.message
              : String(err);
        return { error: `network: the response of ${method} ${url} broke off (${why})` };
      }
      if (typeof bytes === "string") return { error: `network: ${bytes}` };
      if (holds(response, bytes, sent.secrets)) {
        return { error: `network: the answer of ${method} ${url} holds the credentials the page's git.auth gave; it was refused` };
      }
      return {
        status: response.status,
        statusText: response.statusText,
        headers: Object.fromEntries(response.headers),
        body: bytes.buffer,
        url: response.url || url,
      };
    },
  };
}

/** The page's `git.auth`: `(url) => ({username, password} | {headers} | null)`, or a promise of one.
 * @typedef {(url: string) => any} GitAuth */

/** Which git smart-HTTP request `url` is ("git-upload-pack": a fetch or clone,
 * "git-receive-pack": a push), or null: its ref list (`GET …/info/refs?service=…`) or
 * its POST of that service. */
export function gitEndpoint(url, method) {
  let u;
  try {
    u = new URL(url);
  } catch {
    return null;
  }
  const service = /^git-(upload|receive)-pack$/;
  if (method === "GET" && u.pathname.endsWith("/info/refs") && service.test(u.searchParams.get("service") ?? ""))
    return u.searchParams.get("service");
  const last = u.pathname.slice(u.pathname.lastIndexOf("/") + 1);
  if (method === "POST" && service.test(last) && u.search === "") return last;
  return null;
}

/** `packages` ({indexUrls}) as the worker gets it, or an error message. */
export function checkPackagesOption(packages) {
  if (packages === undefined) return null;
  if (!packages || typeof packages !== "object" || !Array.isArray(packages.indexUrls)) {
    return 'packages needs {indexUrls: ["https://pypi.example.com/simple", ...]}';
  }
  const unknown = Object.keys(packages).find((k) => k !== "indexUrls");
  if (unknown !== undefined) return `packages: unknown option ${unknown.slice(0, 100)}`;
  if (packages.indexUrls.length > MAX_INDEXES) return `packages.indexUrls: at most ${MAX_INDEXES} indexes`;
  for (const entry of packages.indexUrls) {
    let url;
    try {
      url = new URL(entry);
    } catch {
      return `packages.indexUrls: ${String(entry).slice(0, 200)} is not an absolute URL`;
    }
    if (url.protocol !== "https:" && url.protocol !== "http:") return `packages.indexUrls: ${entry} is not an http(s) URL`;
    if (url.username || url.password) return `packages.indexUrls: ${entry} has credentials (the page's secrets stay out of URLs)`;
  }
  return null;
}

/** The network of the model's code: the `network` option plus the package indexes, or
 * null when there is neither. */
export function agentNetwork(network, packages) {
  const indexes = packages?.indexUrls ?? [];
  if (!network && indexes.length === 0) return null;
  return { allow: network?.allow ?? [], methods: network?.methods, maxResponseBytes: network?.maxResponseBytes, indexes };
}

/** The option as the worker gets it (plain data), or an error message. */
export function checkNetworkOption(network) {
  if (network === undefined) return null;
  if (!network || typeof network !== "object" || !Array.isArray(network.allow) || network.allow.length === 0) {
    return 'network needs {allow: ["https://api.example.com/path/", ...]}';
  }
  for (const entry of network.allow) {
    try {
      const url = new URL(entry);
      if (url.protocol !== "https:" && url.protocol !== "http:") return `network.allow: ${entry} is not an http(s) URL`;
    } catch {
      return `network.allow: ${String(entry).slice(0, 200)} is not an absolute URL`;
    }
  }
  return checkOriginHeaders(network.headers, network.allow);
}

/** `network.headers`: {origin: {name: value}} for allowed origins only, or why not. */
function checkOriginHeaders(headers, allow) {
  if (headers === undefined) return null;
  if (!headers || typeof headers !== "object" || Array.isArray(headers)) {
    return 'network.headers needs {"https://api.example.com": {"x-api-key": "..."}}';
  }
  const origins = new Set(allow.map((entry) => new URL(entry).origin));
  for (const [origin, values] of Object.entries(headers)) {
    let parsed;
    try {
      parsed = new URL(origin);
    } catch {
      return `network.headers: ${origin.slice(0, 200)} is not an origin`;
    }
    if (parsed.origin !== origin.replace(/\/$/, "") || !origins.has(parsed.origin)) {
      return `network.headers: ${origin.slice(0, 200)} must be an origin (scheme://host[:port]) of network.allow`;
    }
    if (
      !values
      || typeof values !== "object"
      || !Object.entries(values).every(
        ([k, v]) => /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$/.test(k) && typeof v === "string" && v.length < 8192,
      )
    ) {
      return `network.headers["${origin}"] must map header names to string values`;
    }
  }
  return null;
}

/**
 * The turns of each command's requests (the command is the sandbox's nonce): at most
 * MAX_IN_FLIGHT of a command run at once, the rest wait theirs; when the command ends
 * (or the harness closes), its requests are aborted and later ones refused.
 */
export class CommandSlots {
  constructor() {
    /** @type {Map<string, {controller: AbortController, active: number, waiting: Function[]}>} */
    this._commands = new Map();
    this._ended = new Set(); // nonces of ended commands (the last 1,000)
  }

  /** A turn for one request of `command`, or null once the command has ended.
   * @param {string} command @returns {Promise<{signal: AbortSignal, release: () => void} | null>} */
  take(command) {
    let entry = this._commands.get(command);
    if (entry === undefined) {
      if (this._ended.has(command)) return Promise.resolve(null);
      entry = { controller: new AbortController(), active: 0, waiting: [] };
      this._commands.set(command, entry);
    }
    const take = () => {
      if (entry.controller.signal.aborted) return null;
      entry.active++;
      return {
        signal: entry.controller.signal,
        release: () => {
          entry.active--;
          entry.waiting.shift()?.();
        },
      };
    };
    if (entry.active < MAX_IN_FLIGHT) return Promise.resolve(take());
    return new Promise((resolve) => entry.waiting.push(() => resolve(take())));
  }

  /** A command ended: its requests are aborted with `reason`, and later ones refused.
   * @param {string} command @param {unknown} reason */
  end(command, reason) {
    this._ended.add(command);
    if (this._ended.size > 1000) this._ended.delete(this._ended.values().next().value);
    const entry = this._commands.get(command);
    if (entry === undefined) return;
    this._commands.delete(command);
    entry.controller.abort(reason);
    for (const wake of entry.waiting.splice(0)) wake();
  }

  /** Every command ended (the harness closed). @param {unknown} reason */
  endAll(reason) {
    for (const command of [...this._commands.keys()]) this.end(command, reason);
  }
}
