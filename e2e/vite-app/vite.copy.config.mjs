// The other way, without the plugin: the bundle is copied into the public directory
// (served and copied as-is) and the app passes baseUrl (VITE_PYHARNESS_BASE_URL here).
export default { publicDir: "public-copy", build: { outDir: "dist-copy" } };
