// Attachments in the widget's composer: files pasted or dropped wait in a strip of
// thumbnails (each with a remove button) until the prompt is sent with them
// (h.prompt(text, {attachments})). Images are drawn from the bytes the page holds (blob:
// URLs it makes itself), never from a URL the model wrote.
import { formatBytes, h } from "./widget-dom.mjs";

const IMAGE = /^image\/(png|jpeg|gif|webp)$/;

export class AttachmentTray {
  /** @param {HTMLElement} strip the composer's strip (hidden while empty) */
  constructor(strip) {
    this.strip = strip;
    /** @type {{file: File, url: string | null}[]} */
    this.items = [];
  }

  get size() {
    return this.items.length;
  }

  /** Files the user pasted or dropped (a FileList or an array). */
  add(files) {
    for (const file of Array.from(files ?? [])) {
      if (!(file instanceof File)) continue;
      this.items.push({ file, url: IMAGE.test(file.type) ? URL.createObjectURL(file) : null });
    }
    this.#draw();
  }

  /** What to send ({name, type, data}), emptying the tray; the files, to put back if the
   * prompt is refused. */
  take() {
    const taken = this.items.map(({ file }) => file);
    this.clear();
    return taken;
  }

  clear() {
    for (const item of this.items) if (item.url) URL.revokeObjectURL(item.url);
    this.items = [];
    this.#draw();
  }

  #draw() {
    this.strip.replaceChildren(
      ...this.items.map((item, i) => {
        const remove = h("button", { type: "button", class: "remove", "aria-label": `Remove ${item.file.name}`, title: "Remove" }, "×");
        remove.addEventListener("click", () => {
          const [gone] = this.items.splice(i, 1);
          if (gone.url) URL.revokeObjectURL(gone.url);
          this.#draw();
        });
        const face = item.url ? h("img", { src: item.url, alt: item.file.name }) : h("span", { class: "file-chip" }, item.file.name);
        return h(
          "div",
          { class: "attachment", part: "attachment", title: `${item.file.name} · ${formatBytes(item.file.size)}` },
          face,
          remove,
        );
      }),
    );
    this.strip.hidden = this.items.length === 0;
  }
}

/** The files a paste or a drop carries. @param {DataTransfer | null | undefined} transfer */
export function filesOf(transfer) {
  return Array.from(transfer?.files ?? []);
}

/** Blob URLs of the images a prompt carried, read back from the workspace (a reload
 * redraws them): {url, name} each; a file that is gone is left out. The model can
 * rewrite /work/attachments/, so a file is drawn only while it is what the user sent:
 * its size and SHA-256 must match those the run_start event keeps (taken when the run
 * began, stored with the thread out of the model's reach); one that does not is
 * {url: null, name, changed: true}, drawn as a placeholder, never as the new bytes. */
export async function imagesOf(fs, attachments) {
  const out = [];
  for (const a of attachments ?? []) {
    if (!IMAGE.test(a.mediaType ?? "")) continue;
    const name = a.path.split("/").pop();
    let bytes;
    try {
      if (typeof a.sha256 === "string" && (await fs.stat(a.path)).size !== a.size) {
        out.push({ url: null, name, changed: true });
        continue;
      }
      bytes = await fs.readFile(a.path);
    } catch {
      continue; // removed since: nothing to draw
    }
    if (typeof a.sha256 === "string" && (await sha256(bytes)) !== a.sha256) {
      out.push({ url: null, name, changed: true });
      continue;
    }
    out.push({ url: URL.createObjectURL(new Blob([bytes], { type: a.mediaType })), name });
  }
  return out;
}

async function sha256(bytes) {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}
