// Just enough of a DOM for the widget's pure renderers under node: elements, text nodes
// and fragments, attributes, textContent, and the properties markdown.mjs and
// widget-dom.mjs set. No parser: like the widget, it can only be given nodes and text.

const PROPS = { href: "href", title: "title", target: "target", rel: "rel", className: "class" };

class Node {
  parentNode = null;
  childNodes = [];
  append(...nodes) {
    for (const node of nodes) {
      const child = typeof node === "string" ? new Text(node) : node;
      if (child instanceof Fragment) this.append(...child.childNodes.splice(0));
      else {
        child.parentNode?.childNodes.splice(child.parentNode.childNodes.indexOf(child), 1);
        child.parentNode = this;
        this.childNodes.push(child);
      }
    }
  }
  get textContent() {
    return this.childNodes.map((c) => c.textContent).join("");
  }
  set textContent(text) {
    this.childNodes = [];
    if (text !== "") this.append(String(text));
  }
  get children() {
    return this.childNodes.filter((c) => c instanceof Element);
  }
  /** Every element below, in document order. */
  *descendants() {
    for (const child of this.childNodes) {
      if (!(child instanceof Element)) continue;
      yield child;
      yield* child.descendants();
    }
  }
}

class Text extends Node {
  constructor(text) {
    super();
    this.data = String(text);
  }
  get textContent() {
    return this.data;
  }
}

class Fragment extends Node {}

class Element extends Node {
  constructor(tag) {
    super();
    this.tagName = tag.toUpperCase();
    this.attributes = new Map();
    this.style = {};
    this.dataset = {};
  }
  setAttribute(name, value) {
    this.attributes.set(name, String(value));
  }
  getAttribute(name) {
    return this.attributes.get(name) ?? null;
  }
  remove() {
    this.parentNode?.childNodes.splice(this.parentNode.childNodes.indexOf(this), 1);
    this.parentNode = null;
  }
}
for (const [prop, attr] of Object.entries(PROPS)) {
  Object.defineProperty(Element.prototype, prop, {
    get() {
      return this.getAttribute(attr) ?? "";
    },
    set(value) {
      this.setAttribute(attr, value);
    },
  });
}

export const fakeDocument = {
  createElement: (tag) => new Element(tag),
  createTextNode: (text) => new Text(text),
  createDocumentFragment: () => new Fragment(),
};

/** The elements of a fragment or element with a tag, in document order. */
export function all(root, tag) {
  return [...root.descendants()].filter((e) => e.tagName === tag.toUpperCase());
}
