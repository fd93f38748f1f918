// The network for the model's code (`createHarness({network})`), decided on the page.
//
// The sandbox has no network at all; `curl` and python3's `pyharness_net.fetch` ask the
// harness, which asks the page. Here a request must match an allowed origin plus path
// prefix and method; it goes out with the page's fetch but without cookies or referrer,
// follows no redirect (the browser hides a redirect's target, so it could not be checked
// again) and its response is capped. Everything else gets a reason the model can act on.

const MIB = 1024 * 1024;
// Ambiguous path separators and dot segments that could make a prefix check lie.
const AMBIGUOUS = /%2f|%5c|%2e|\\|;/i;

/**
 * @param {{allow: string[], methods?: string[], maxResponseBytes?: number} | undefined} options
 * @param {typeof fetch} pageFetch
 */
export function createNetwork(options, pageFetch) {
  if (options === undefined || options === null) return null;
  const allow = options.allow.map((entry) => {
    const url = new URL(entry);
    return { origin: url.origin, path: url.pathname };
  });
  const methods = new Set(options.methods ?? ["GET", "HEAD"]);
  const maxBytes = options.maxResponseBytes ?? 10 * MIB;

  /** Why `url` may not be fetched with `method`, or null when it may. */
  function refusal(url, method) {
    let parsed;
    try {
      parsed = new URL(url);
    } catch {
      return `not a URL: ${url.slice(0, 200)}`;
    }
    if (!methods.has(method)) return `the method ${method} is not allowed (allowed: ${[...methods].join(", ")})`;
    if (parsed.username || parsed.password) return "URLs with credentials are not allowed";
    if (AMBIGUOUS.test(parsed.pathname)) return "the path has encoded separators or dot segments";
    const ok = allow.some(({ origin, path }) =>
      parsed.origin === origin && (path === "/" || parsed.pathname === path.replace(/\/$/, "")
        || parsed.pathname.startsWith(path.endsWith("/") ? path : `${path}/`)));
    return ok ? null : `${parsed.origin}${parsed.pathname} is not in the allowed network (${options.allow.join(", ")})`;
  }

  return {
    allow: options.allow,

    /** One request: resolves with {error} or {status, statusText, headers, body, url}. */
    async fetch({ url, method, headers, body }) {
      const why = refusal(url, method);
      if (why !== null) return { error: `network: ${why}` };
      let response;
      try {
        response = await pageFetch(url, {
          method,
          headers,
          body: body ?? undefined,
          credentials: "omit",
          redirect: "error",
          referrerPolicy: "no-referrer",
          signal: AbortSignal.timeout(30_000),
        });
      } catch (err) {
        return { error: `network: ${method} ${url} failed (${err && err.message ? err.message : err}; redirects are not followed, and a server of another origin must allow CORS)` };
      }
      const chunks = [];
      let size = 0;
      if (response.body) {
        const reader = response.body.getReader();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          size += value.byteLength;
          if (size > maxBytes) {
            reader.cancel();
            return { error: `network: the response is larger than ${maxBytes} bytes (maxResponseBytes)` };
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

/** The option as the worker gets it (plain data), or an error message. */
export function checkNetworkOption(network) {
  if (network === undefined) return null;
  if (!network || typeof network !== "object" || !Array.isArray(network.allow) || network.allow.length === 0) {
    return "network needs {allow: [\"https://api.example.com/path/\", ...]}";
  }
  for (const entry of network.allow) {
    try {
      const url = new URL(entry);
      if (url.protocol !== "https:" && url.protocol !== "http:") return `network.allow: ${entry} is not an http(s) URL`;
    } catch {
      return `network.allow: ${String(entry).slice(0, 200)} is not an absolute URL`;
    }
  }
  return null;
}
