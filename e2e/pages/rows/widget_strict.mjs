// The page script of e2e/pages/widget-strict.html (a page whose CSP allows no inline
// script or style) and the page side of e2e/test_widget_strict.py.
import "/pyharness/widget.mjs";

/** Every CSP violation the page saw: directive, what was blocked, its first characters. */
const violations = [];
document.addEventListener("securitypolicyviolation", (e) => violations.push(`${e.effectiveDirective} ${e.blockedURI} ${e.sample}`));

/** Put a <pyharness-chat> with these options on the page (its run_end goes to window.lastResult). */
export function mount(options) {
  const chat = document.createElement("pyharness-chat");
  chat.options = options;
  chat.addEventListener("pyharness-run-end", (e) => {
    window.lastResult = e.detail;
  });
  document.querySelector("main")?.replaceChildren(chat);
}

/** How the widget is drawn: a few computed styles that only its stylesheet gives. */
export function drawn() {
  const root = document.querySelector("pyharness-chat")?.shadowRoot;
  if (!root) throw new Error("no widget");
  const style = (selector) => {
    const el = root.querySelector(selector);
    if (!el) throw new Error(`no ${selector}`);
    return getComputedStyle(el);
  };
  return {
    sheets: root.adoptedStyleSheets.length,
    styleElements: root.querySelectorAll("style, [style]:not(.fill):not(textarea)").length,
    header: style("header").display,
    send: { width: style(".send").width, background: style(".send").backgroundColor },
    viewer: style(".viewer-body").overflow,
  };
}

export const seen = () => violations;

document.body.dataset.loaded = "yes";
