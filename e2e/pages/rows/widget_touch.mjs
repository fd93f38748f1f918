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
