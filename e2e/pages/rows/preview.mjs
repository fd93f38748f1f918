// The page code of e2e/test_preview.py's rows, on e2e/pages/index.html: h.preview() of
// the site a model (on the scripted provider server) writes, seen from the page.

const { boot } = window;

/** Resolves once `preview` is in one of `states` (with its load count past `after`). */
function until(preview, states, after = 0, ms = 20_000) {
  return new Promise((resolve, reject) => {
    const check = () => {
      if (states.includes(preview.state) && preview.loads > after) {
        stop();
        clearTimeout(timer);
        resolve(snapshot(preview));
      }
    };
    const stop = preview.subscribe(check);
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`the preview stayed ${preview.state} (load ${preview.loads}): ${JSON.stringify(preview.entries)}`));
    }, ms);
    check();
  });
}

/** Resolves once the preview's console has a line starting with `text` (a page's own
 * awaited work may end after its load event). */
async function logged(preview, text, ms = 20_000) {
  const end = performance.now() + ms;
  while (!preview.entries.some((e) => e.text.startsWith(text))) {
    if (performance.now() > end) throw new Error(`no ${JSON.stringify(text)} in ${JSON.stringify(preview.entries)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function snapshot(preview) {
  return { state: preview.state, loads: preview.loads, entry: preview.entry, entries: preview.entries.map((e) => ({ ...e })) };
}

async function prompt(h, text) {
  const run = h.prompt(text);
  const events = [];
  for await (const e of run) events.push(e);
  return { events, done: await run.done };
}

function mount(preview) {
  const box = document.createElement("div");
  box.id = "preview-box";
  box.style.cssText = "width: 640px; height: 420px; border: 1px solid #888";
  box.append(preview.element);
  document.body.append(box);
}

/** A harness with the preview_errors tool, and a preview of site/ on the page. */
async function withPreview(model) {
  const h = await boot({ model, preview: true });
  const preview = h.preview({ root: "site" });
  window.h = h;
  window.preview = preview;
  mount(preview);
  return { h, preview };
}

/** The model writes a site, the preview (opened before) shows it; a later change to its
 * style reloads it once. Returns each step's state; the test looks inside the frame. */
export async function siteThenRestyle(model) {
  const { h, preview } = await withPreview(model);
  const empty = await until(preview, ["loaded", "failed"]);
  const first = await prompt(h, "make me a site");
  await until(preview, ["loaded"], empty.loads);
  await logged(preview, "rendered ");
  const shown = snapshot(preview);
  return { empty, first: first.done, shown };
}

/** After siteThenRestyle: the next prompt changes style.css; how many loads it caused. */
export async function restyle() {
  const before = window.preview.loads;
  const run = await prompt(window.h, "make the title blue");
  const shown = await until(window.preview, ["loaded"], before);
  await new Promise((r) => setTimeout(r, 800)); // no second reload comes
  return { done: run.done, shown, loads: window.preview.loads - before, state: window.preview.state };
}

/** The model asks preview_errors, fixes, asks again: what each tool call answered. */
export async function errorsToTheModel(model) {
  const { h, preview } = await withPreview(model);
  const run = await prompt(h, "make a site and check it");
  const ends = run.events.filter((e) => e.type === "tool_end" && e.name === "preview_errors").map((e) => e.output);
  return { done: run.done, ends, entries: preview.entries, state: preview.state, tools: h.tools.map((t) => t.name) };
}

/** Close, then a fresh preview: the page is fine, the frame gone. */
export async function closeAndReopen() {
  window.preview.close();
  const gone = window.preview.iframe === null && !document.querySelector("#preview-box iframe");
  const again = window.h.preview({ root: "site" });
  document.getElementById("preview-box").replaceChildren(again.element);
  window.preview = again;
  const shown = await until(again, ["loaded", "failed"]);
  return { gone, shown };
}

/** A hostile site (its script tries every way out, and logs what each gave), judged
 * from the page: what it could read of the page's, whether the page kept working while
 * it spun, and what a reopened preview shows. `evil` is another origin (its server logs
 * what reaches it); the page's own origin is tried too. */
export async function hostileSite(evil, attack, navigate) {
  // biome-ignore lint/suspicious/noDocumentCookie: the page's secret, which the site must not read
  document.cookie = "pagesecret=cookie-of-the-page; path=/";
  localStorage.setItem("pagesecret", "storage-of-the-page");
  const h = await boot({ permissions: { read: { "site/private/**": "deny" } } });
  const fill = (text) => text.replaceAll("EVIL", evil).replaceAll("PAGE", location.origin);
  await h.fs.mkdir("site/private", { recursive: true });
  await h.fs.writeFile("site/private/key.txt", "the-denied-key");
  await h.fs.writeFile(
    "site/index.html",
    fill(`<!doctype html><title>x</title><h1>hostile</h1>
<meta http-equiv="refresh" content="0;url=EVIL/attack/static-refresh">
<form id="f" action="EVIL/attack/form" method="post"><input name="a" value="b"></form>
<a id="top" href="EVIL/attack/link-top" target="_top">out</a>
<script type="module" src="attack.mjs"></script>`),
  );
  await h.fs.writeFile("site/attack.mjs", fill(attack));
  await h.fs.writeFile("site/nav.html", `<!doctype html><p>away</p><script type="module" src="nav.mjs"></script>`);
  await h.fs.writeFile("site/nav.mjs", fill(navigate));
  const diagnostics = h.diagnostics.length;
  const preview = h.preview({ root: "site" });
  window.preview = preview;
  mount(preview);
  const loaded = await until(preview, ["loaded"]);
  // the site's script ends by spinning forever: the page's own timers go on
  let ticks = 0;
  const timer = setInterval(() => ticks++, 10);
  await new Promise((r) => setTimeout(r, 2500));
  clearInterval(timer);
  const entries = preview.entries.map((e) => ({ ...e }));
  // the site's page that navigates itself away, every way it can
  preview.reload("nav.html");
  await new Promise((r) => setTimeout(r, 2500));
  const navigated = snapshot(preview);
  preview.close();
  const gone = !document.querySelector("#preview-box iframe");
  await h.fs.writeFile("site/index.html", "<!doctype html><p id=ok>fine</p><script>console.log('fine')</script>");
  const again = h.preview({ root: "site" });
  document.getElementById("preview-box").replaceChildren(again.element);
  const reopened = await until(again, ["loaded"]);
  again.close();
  const harnessWorks = (await h.fs.readFile("site/private/key.txt", { encoding: "utf8" })) === "the-denied-key";
  const result = {
    loaded,
    entries,
    ticks,
    navigated,
    gone,
    reopened,
    harnessWorks,
    newDiagnostics: h.diagnostics.slice(diagnostics),
  };
  h.close();
  return result;
}

/** Names and sizes a site should not get past: a page asking for ../, %2e%2e and NUL
 * paths, a 50 MB image, and 2,100 files at once. What the preview's console said. */
export async function hostileNames(zipBase64) {
  const h = await boot({});
  // 10,000 files under the root first (a zip the test made): the preview never lists them
  const imported = await h.fs.importZip(Uint8Array.from(atob(zipBase64), (c) => c.charCodeAt(0)));
  await h.fs.writeFile("secret.txt", "outside-the-root");
  await h.fs.writeFile("site/%2e%2e.html", "<p>a file named %2e%2e.html</p>");
  await h.fs.writeFile("site/big.png", new Uint8Array(50 * 1024 * 1024));
  await h.fs.writeFile(
    "site/index.html",
    `<!doctype html><img src="big.png" alt=""><script type="module">
const hook = window.__pyharnessPreview;
const status = async (url) => (await hook.fetch(url)).status;
console.log("dotdot", await status("http://site.preview.invalid/../secret.txt"));
console.log("encoded", await status("http://site.preview.invalid/%2e%2e/secret.txt"));
console.log("literal", await (await fetch("%252e%252e.html")).text());
console.log("nul", await status("http://site.preview.invalid/a%00b"));
</script>`,
  );
  const many = Array.from({ length: 2100 }, (_, i) => `<img src="m/${i}.png" alt="">`).join("");
  await h.fs.writeFile("site/many.html", `<!doctype html>${many}`);
  // modules 60 deep, and two that import each other
  await h.fs.mkdir("site/deep");
  for (let i = 0; i < 60; i++) {
    await h.fs.writeFile(`site/deep/d${i}.mjs`, i === 59 ? "export const depth = 60;" : `export { depth } from "./d${i + 1}.mjs";`);
  }
  await h.fs.writeFile("site/a.mjs", 'import "./b.mjs";\nexport const a = 1;');
  await h.fs.writeFile("site/b.mjs", 'import "./a.mjs";\nexport const b = 2;');
  await h.fs.writeFile(
    "site/modules.html",
    `<!doctype html><script type="module">import { depth } from "./deep/d0.mjs"; console.log("depth", depth);</script>
<script type="module" src="a.mjs"></script>`,
  );
  const preview = h.preview({ root: "site" });
  mount(preview);
  await until(preview, ["loaded"]);
  await logged(preview, "nul ");
  const names = snapshot(preview);
  preview.reload("many.html");
  const files = await until(preview, ["loaded"], names.loads, 60_000);
  preview.reload("modules.html");
  await until(preview, ["loaded"], files.loads);
  await logged(preview, "depth ");
  const modules = snapshot(preview);
  preview.close();
  h.close();
  return { imported, names, files, modules };
}

/** An origin the page allows (network.allow, as for the shell) is reachable from the site;
 * the page's own origin, not allowed, is not. What the site's fetches gave. */
export async function allowedOrigin(allowed) {
  const h = await boot({ network: { allow: [allowed] } });
  await h.fs.mkdir("site");
  await h.fs.writeFile(
    "site/index.html",
    `<!doctype html><script type="module">
const tryFetch = async (url) => { try { return String((await fetch(url)).status); } catch (e) { return "threw " + e.name; } };
console.log("allowed", await tryFetch(${JSON.stringify(`${allowed}/preview-allowed`)}));
console.log("page", await tryFetch(${JSON.stringify(`${location.origin}/index.html?preview-not-allowed`)}));
</script>`,
  );
  const preview = h.preview({ root: "site" });
  mount(preview);
  await until(preview, ["loaded"]);
  await logged(preview, "page ");
  const loaded = snapshot(preview);
  preview.close();
  h.close();
  return loaded;
}
