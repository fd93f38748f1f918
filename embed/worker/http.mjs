// Streaming HTTP for the Python model providers (harness/runtime/pyodide.py, JsHttp).
//
// The one way out is the page: the worker never holds the model's credentials, so it
// asks the page, which checks the URL against the model's baseUrl, adds the key and
// fetches (with its own fetch, or the `fetch` option). Over postMessage: the worker
// sends `fetch`, the page answers `fetch_head`, then `fetch_chunk`s (transferred
// ArrayBuffers) and `fetch_end` or `fetch_error`; `fetch_abort` stops it. Bodies stream:
// nothing is buffered whole.

/**
 * @param {(message: object, transfer?: Transferable[]) => void} post to the page
 */
export function createHttp(post) {
  const streams = new Map();
  let nextId = 1;

  function newStream() {
    const stream = { chunks: [], done: false, error: null, wake: null, head: null };
    stream.push = (item) => {
      stream.chunks.push(item);
      stream.wake?.();
    };
    return stream;
  }

  function openViaPage(id, stream, url, init) {
    stream.abort = () => post({ type: "fetch_abort", id });
    return new Promise((resolve, reject) => {
      stream.head = { resolve, reject };
      post({ type: "fetch", id, url, method: init.method, headers: init.headers, body: init.body });
    });
  }

  return {
    /** Start a request; resolves when the status and headers are in. Rejects on a
     * network failure (the message says what failed). */
    async open(url, method, headersJson, body) {
      const id = nextId++;
      const stream = newStream();
      streams.set(id, stream);
      const init = { method, headers: JSON.parse(headersJson), body: body ?? undefined };
      try {
        const head = await openViaPage(id, stream, url, init);
        return { id, status: head.status, headers: JSON.stringify(head.headers) };
      } catch (err) {
        streams.delete(id);
        throw new Error(`${method} ${url} failed: ${err?.message ? err.message : err} (network error, CORS, or the server is down)`);
      }
    },

    /** The next body chunk (Uint8Array), or undefined at the end. Rejects if the
     * connection broke. */
    async read(id) {
      const stream = streams.get(id);
      if (!stream) return undefined;
      while (stream.chunks.length === 0 && !stream.done && !stream.error) {
        await new Promise((resolve) => (stream.wake = resolve));
      }
      if (stream.chunks.length) return stream.chunks.shift();
      if (stream.error) throw new Error(stream.error);
      return undefined;
    },

    /** Stop reading: aborts the request if it is still streaming. */
    close(id) {
      const stream = streams.get(id);
      if (!stream) return;
      streams.delete(id);
      if (!stream.done) stream.abort?.();
    },

    /** Whether the request `id` is still open (a later fetch_* answer is dropped). */
    isOpen(id) {
      return streams.has(id);
    },

    /** Messages from the page about requests sent through its fetch. */
    onPageMessage(message) {
      const stream = streams.get(message.id);
      if (!stream) return;
      switch (message.type) {
        case "fetch_head":
          stream.head?.resolve({ status: message.status, headers: message.headers || {} });
          stream.head = null;
          return;
        case "fetch_chunk":
          return stream.push(new Uint8Array(message.data));
        case "fetch_end":
          stream.done = true;
          return stream.wake?.();
        case "fetch_error":
          if (stream.head) {
            stream.head.reject(new Error(message.message));
            stream.head = null;
          }
          stream.error = message.message;
          return stream.wake?.();
      }
    },
  };
}
