// The baseline of an h.fs call: a module worker that posts what it gets straight back,
// and nothing else in its message handler.
self.onmessage = ({ data }) => self.postMessage(data, [data.data]);
