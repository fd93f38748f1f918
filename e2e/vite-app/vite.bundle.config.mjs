// The plugin with a runtime of the app's own (`pyharness build --package ...`: a bundle
// whose sandbox has more packages), given by PYHARNESS_VITE_BUNDLE.
import pyharness from "@pyharness/embed/vite";

export default { plugins: [pyharness({ bundle: process.env.PYHARNESS_VITE_BUNDLE })], build: { outDir: "dist-bundle" } };
