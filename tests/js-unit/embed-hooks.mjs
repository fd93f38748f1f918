// Module resolution for node tests of modules in embed/ and shell/. Registered by
// load-embed.mjs.
// - markdown.mjs imports "./markdown-it.mjs", which only exists in a build (dist/); from
//   embed/ it is the npm package itself.
// - trusted-types.mjs imports "./sandbox-frame.mjs", which the build writes (the frame's
//   script and its hash): a stub stands in.
// - shell/sandbox.mjs imports its Python files as text (esbuild's text loader).

const FRAME_STUB = `data:text/javascript,${encodeURIComponent('export const FRAME_SCRIPT = ""; export const FRAME_HASH = "sha256-";')}`;

export async function resolve(specifier, context, next) {
  if (specifier === "./markdown-it.mjs" && context.parentURL?.endsWith("/embed/widget/markdown.mjs")) {
    return next("markdown-it", context);
  }
  if (specifier === "./sandbox-frame.mjs" && context.parentURL?.endsWith("/embed/page/trusted-types.mjs")) {
    return { url: FRAME_STUB, shortCircuit: true };
  }
  return next(specifier, context);
}

export async function load(url, context, next) {
  if (url.startsWith("file:") && url.endsWith(".py")) {
    const { readFile } = await import("node:fs/promises");
    const text = await readFile(new URL(url), "utf8");
    return { format: "module", source: `export default ${JSON.stringify(text)};`, shortCircuit: true };
  }
  return next(url, context);
}
