// A bundled app: the package is imported by name, as from npm.
import { createHarness } from "@pyharness/embed";
import "@pyharness/embed/widget";

// Set only for the build without the plugin, where the bundle was copied to public/.
const baseUrl = import.meta.env.VITE_PYHARNESS_BASE_URL;
const where = baseUrl ? { baseUrl } : {};

const chat = document.getElementById("chat");
chat.options = {
  ...where,
  model: {
    api: "scripted",
    turns: [
      { text: "Writing it.", toolCalls: [{ name: "write", arguments: { path: "widget.txt", content: "from the widget\n" } }] },
      { text: "The widget works in a Vite build." },
    ],
  },
};

async function api() {
  // Its own workspace: the widget keeps the page's default one (and its conversation).
  const h = await createHarness({
    ...where,
    workspace: "vite-api",
    model: {
      api: "scripted",
      turns: [
        { text: "Writing. ", toolCalls: [{ name: "write", arguments: { path: "from-vite.txt", content: "bundled by vite\n" } }] },
        { text: "Done." },
      ],
    },
  });
  const done = await h.prompt("write from-vite.txt").done;
  const file = await h.fs.readFile("from-vite.txt", "utf8");
  const versions = h.versions;
  h.close();
  return { done, file, versions };
}

api().then(
  (result) => {
    document.getElementById("api").textContent = JSON.stringify(result);
  },
  (error) => {
    document.getElementById("api").textContent = JSON.stringify({ error: error.message });
  },
);
