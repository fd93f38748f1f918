// Every message the page sends to a worker, as JSON text, for rows that look for a
// secret in them (mcp.mjs, git.mjs): recorded from when a row module first imports this.

/** @type {string[]} */
export const sentToWorkers = [];
const post = Worker.prototype.postMessage;
Worker.prototype.postMessage = function record(message, ...rest) {
  try {
    sentToWorkers.push(JSON.stringify(message));
  } catch {
    sentToWorkers.push(String(message));
  }
  return post.call(this, message, ...rest);
};
