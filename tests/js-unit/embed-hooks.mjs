// Module resolution for node tests of the widget's modules in embed/: markdown.mjs imports
// "./markdown-it.mjs", which only exists in a build (dist/); from embed/ it is the npm
// package itself. Registered by load-embed.mjs.

export async function resolve(specifier, context, next) {
  if (specifier === "./markdown-it.mjs" && context.parentURL?.endsWith("/embed/markdown.mjs")) {
    return next("markdown-it", context);
  }
  return next(specifier, context);
}
