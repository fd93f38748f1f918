// The page code of e2e/test_files_panel.py, on e2e/pages/widget.html (window.mount puts a
// configured <pyharness-chat> on it); called from Python by e2e/conftest.py's call(). Each
// returns JSON values for the row's assertions, which stay in Python.

const chat = () => document.querySelector("pyharness-chat");
const tree = () => chat().shadowRoot.querySelector(".tree");

/** The h.fs requests the page sent to the harness worker, by op; every worker the page
 * starts from now on is counted (the widget's harness is made inside the widget). */
const sent = { readdir: [], stat: 0, other: 0, last: 0 };

export function countFsRequests() {
  const post = Worker.prototype.postMessage;
  Worker.prototype.postMessage = function (message, ...rest) {
    if (message?.type === "fs" && typeof message.request === "string") {
      const request = JSON.parse(message.request);
      if (request.op === "readdir") sent.readdir.push(request.path);
      else if (request.op === "stat") sent.stat++;
      else sent.other++;
      sent.last = performance.now();
    }
    return post.call(this, message, ...rest);
  };
}

/** The counts so far; `reset` starts them again from zero. */
export function fsRequests(reset = false) {
  const counts = { readdir: [...sent.readdir], stat: sent.stat, other: sent.other };
  if (reset) Object.assign(sent, { readdir: [], stat: 0, other: 0 });
  return counts;
}

/** Resolves once the page sent no h.fs request for `quietMs` (the panel's listing is done). */
export async function settled(quietMs = 500) {
  const started = performance.now();
  await new Promise((resolve) => setTimeout(resolve, quietMs));
  while (performance.now() - Math.max(sent.last, started) < quietMs) await new Promise((resolve) => setTimeout(resolve, 50));
  return Math.round(performance.now() - started - quietMs);
}

/** Store the zip (base64) as the workspace `name` in OPFS, from a harness of the page's own
 * that is closed again, so the widget boots over it. */
export async function storeWorkspace(name, base64) {
  const { createHarness } = await import("/pyharness/pyharness.mjs");
  const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
  const h = await createHarness({ workspace: name, storage: "opfs", model: { api: "scripted", turns: [] } });
  const imported = await h.fs.importZip(bytes, { replace: true });
  await h.close();
  return imported;
}

/** Whether the tree shows at least `count` entries (files or folders). */
export function showsEntries(count) {
  return tree().querySelectorAll(".entry").length >= count;
}

/** What the tree shows: the folders (path, aria-expanded), the number of file rows in each
 * folder, and each "show more" button (its folder, its text, its label). */
export function shown() {
  const t = tree();
  const folders = [...t.querySelectorAll(".entry.dir")].map((b) => [b.dataset.path, b.getAttribute("aria-expanded")]);
  const files = {};
  for (const f of t.querySelectorAll(".entry.file")) {
    const dir = f.dataset.path.includes("/") ? f.dataset.path.slice(0, f.dataset.path.lastIndexOf("/")) : ".";
    files[dir] = (files[dir] ?? 0) + 1;
  }
  const more = [...t.querySelectorAll(".more")].map((b) => [b.dataset.more, b.textContent, b.getAttribute("aria-label")]);
  return { folders, files, more, nodes: t.querySelectorAll("*").length };
}

/** Click the folder `path` (open or close it); resolves with the milliseconds until the
 * tree shows `expect` file rows under it and the longest main-thread task meanwhile. */
export async function toggleFolder(path, expect) {
  return timed(
    () =>
      tree()
        .querySelector(`.entry.dir[data-path="${CSS.escape(path)}"]`)
        .click(),
    () => rowsUnder(path) === expect,
  );
}

/** Click the "show more" button of the folder `path`, as toggleFolder. */
export async function showMore(path, expect) {
  return timed(
    () =>
      tree()
        .querySelector(`.more[data-more="${CSS.escape(path)}"]`)
        .click(),
    () => rowsUnder(path) === expect,
  );
}

function rowsUnder(path) {
  return [...tree().querySelectorAll(".entry.file")].filter((f) => f.dataset.path.startsWith(`${path}/`)).length;
}

/** Run `act`, then poll `done` each frame; the longest task is measured with a
 * PerformanceObserver (long tasks are those over 50 ms). */
async function timed(act, done) {
  let longest = 0;
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) longest = Math.max(longest, entry.duration);
  });
  observer.observe({ type: "longtask" });
  const started = performance.now();
  act();
  while (!done()) {
    if (performance.now() - started > 30_000) throw new Error("the tree did not show the rows in 30 s");
    await new Promise((resolve) => requestAnimationFrame(resolve));
  }
  const ms = Math.round(performance.now() - started);
  await new Promise((resolve) => setTimeout(resolve, 50)); // the observer's last entries
  observer.disconnect();
  return { ms, longestTaskMs: Math.round(longest) };
}

/** The page's timers, watched: a 10 ms interval whose longest gap between two ticks says
 * how long the page was frozen (nothing else the page does can run during a gap), and the
 * longest single task (a long task is one over 50 ms; 0 when there was none). */
const timers = { handle: 0, last: 0, longest: 0, ticks: 0, longestTask: 0, observer: null };

export function watchTimers() {
  clearInterval(timers.handle);
  timers.observer?.disconnect();
  Object.assign(timers, { last: performance.now(), longest: 0, ticks: 0, longestTask: 0 });
  timers.observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) timers.longestTask = Math.max(timers.longestTask, entry.duration);
  });
  timers.observer.observe({ type: "longtask" });
  timers.handle = setInterval(() => {
    const now = performance.now();
    timers.longest = Math.max(timers.longest, now - timers.last);
    timers.last = now;
    timers.ticks++;
  }, 10);
}

/** The longest gap so far (ms) and the ticks counted; `stop` ends the watch. */
export function timerGaps(stop = false) {
  const now = performance.now();
  const gaps = {
    longestMs: Math.round(Math.max(timers.longest, now - timers.last)),
    ticks: timers.ticks,
    longestTaskMs: Math.round(timers.longestTask),
  };
  if (stop) {
    clearInterval(timers.handle);
    timers.observer?.disconnect();
  }
  return gaps;
}

/** The "show more" button of `dir`, its text (null when there is none). */
export function moreOf(dir) {
  return tree().querySelector(`.more[data-more="${CSS.escape(dir)}"]`)?.textContent ?? null;
}
