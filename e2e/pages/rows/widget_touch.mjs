// The page side of e2e/test_widget_touch.py: the widget's touch targets as drawn.

const TARGETS = "button, textarea, input, select, summary, a[href], [role=button], [tabindex]:not([tabindex='-1'])";
const MIN = 44;

/**
 * Every visible element of the widget a finger can reach, and those under 44 × 44 CSS px
 * (with their label and size); how far the page runs past the viewport's width.
 */
export function targets() {
  const root = document.querySelector("pyharness-chat").shadowRoot;
  const shown = [...root.querySelectorAll(TARGETS)].filter((el) => {
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && el.checkVisibility({ opacityProperty: true, visibilityProperty: true });
  });
  const small = shown
    .map((el) => ({ el, r: el.getBoundingClientRect() }))
    .filter(({ r }) => Math.round(r.width) < MIN || Math.round(r.height) < MIN)
    .map(({ el, r }) => ({
      what: `${el.tagName.toLowerCase()}.${el.className || ""} ${el.getAttribute("aria-label") ?? el.textContent?.trim().slice(0, 30) ?? ""}`,
      width: Math.round(r.width),
      height: Math.round(r.height),
    }));
  return { count: shown.length, small, overflow: document.documentElement.scrollWidth - innerWidth };
}

/** With a screen keyboard open (the viewport shortened): where the composer, the send
 * button and the conversation are, and whether the newest message is in view. */
export function keyboardView() {
  const root = document.querySelector("pyharness-chat").shadowRoot;
  const box = (selector) => {
    const r = root.querySelector(selector).getBoundingClientRect();
    return { top: Math.round(r.top), bottom: Math.round(r.bottom), height: Math.round(r.height) };
  };
  const log = root.querySelector(".log");
  const last = [...root.querySelectorAll(".msg")].at(-1).getBoundingClientRect();
  const shown = log.getBoundingClientRect();
  return {
    height: innerHeight,
    input: box("textarea#input"),
    send: box(".send"),
    log: box(".log"),
    lastInView: Math.round(last.bottom) <= Math.round(shown.bottom) + 1 && last.bottom > shown.top,
    focused: root.activeElement?.id ?? null,
    overflow: document.documentElement.scrollWidth - innerWidth,
    pageScroll: Math.round(document.scrollingElement.scrollTop),
  };
}
