// The widget's stylesheet (inside its shadow root). Every colour, font and radius comes
// from a --pyharness-* custom property with a default, so a page themes the widget from
// outside: pyharness-chat { --pyharness-accent: #0a7; }. theme="dark" and theme="auto"
// switch the defaults.

// The dark palette, for theme="dark" and for theme="auto" under a dark system setting.
const DARK = `
  --_bg: var(--pyharness-bg, #111318);
  --_surface: var(--pyharness-surface, #181b22);
  --_fg: var(--pyharness-fg, #e7e9ee);
  --_muted: var(--pyharness-muted, #9aa3b2);
  --_border: var(--pyharness-border, #2a2f3a);
  --_accent: var(--pyharness-accent, #8183f4);
  --_code-bg: var(--pyharness-code-bg, #0b0d12);
  --_error: var(--pyharness-error, #f97066);
  --_ok: var(--pyharness-ok, #47cd89);
  color-scheme: dark;
`;

export const STYLE = `
:host {
  --_font: var(--pyharness-font, system-ui, -apple-system, "Segoe UI", Roboto, sans-serif);
  --_mono: var(--pyharness-mono, ui-monospace, "SF Mono", Menlo, Consolas, "Liberation Mono", monospace);
  --_size: var(--pyharness-font-size, 14px);
  --_radius: var(--pyharness-radius, 12px);
  --_bg: var(--pyharness-bg, #ffffff);
  --_surface: var(--pyharness-surface, #f6f7f9);
  --_fg: var(--pyharness-fg, #1a1d24);
  --_muted: var(--pyharness-muted, #667085);
  --_border: var(--pyharness-border, #e4e7ec);
  --_accent: var(--pyharness-accent, #4f46e5);
  --_accent-fg: var(--pyharness-accent-fg, #ffffff);
  --_user-bg: var(--pyharness-user-bg, color-mix(in srgb, var(--_accent) 9%, var(--_bg)));
  --_user-fg: var(--pyharness-user-fg, var(--_fg));
  --_code-bg: var(--pyharness-code-bg, #0f172a);
  --_code-fg: var(--pyharness-code-fg, #e2e8f0);
  --_error: var(--pyharness-error, #d92d20);
  --_ok: var(--pyharness-ok, #079455);
  --_focus: var(--pyharness-focus, color-mix(in srgb, var(--_accent) 55%, transparent));
  display: block;
  position: relative;
  height: 600px;
  min-height: 320px;
  box-sizing: border-box;
  overflow: hidden;
  container-type: inline-size;
  color: var(--_fg);
  background: var(--_bg);
  border: 1px solid var(--_border);
  border-radius: var(--_radius);
  font: var(--_size)/1.55 var(--_font);
  color-scheme: light;
}
:host([theme="dark"]) {
${DARK}}
@media (prefers-color-scheme: dark) {
  :host([theme="auto"]) {
${DARK}  }
}
:host([hidden]) { display: none; }
*, *::before, *::after { box-sizing: border-box; }
[hidden] { display: none !important; }
.sr-only { position: absolute; width: 1px; height: 1px; padding: 0; margin: -1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; border: 0; }
button { font: inherit; color: inherit; }
:focus-visible { outline: 2px solid var(--_focus); outline-offset: 2px; border-radius: 6px; }
svg { width: 16px; height: 16px; flex: none; fill: none; stroke: currentColor; stroke-width: 2; stroke-linecap: round; stroke-linejoin: round; }

.root { display: flex; flex-direction: column; height: 100%; }
.root > header, .root > .boot { flex: none; }

/* header ------------------------------------------------------------------ */
header { display: flex; align-items: center; gap: 10px; padding: 10px 12px 10px 16px; border-bottom: 1px solid var(--_border); min-width: 0; }
.brand { display: flex; align-items: center; gap: 8px; font-weight: 650; letter-spacing: -0.01em; white-space: nowrap; }
.mark { display: grid; place-items: center; width: 26px; height: 26px; border-radius: 8px; background: var(--_accent); color: var(--_accent-fg); flex: none; }
.mark svg { width: 15px; height: 15px; }
.model { color: var(--_muted); font-size: 0.86em; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; min-width: 0; padding: 2px 8px; border: 1px solid var(--_border); border-radius: 999px; }
.spacer { flex: 1; }
.status { display: flex; align-items: center; gap: 6px; color: var(--_muted); font-size: 0.86em; white-space: nowrap; }
.dot { width: 8px; height: 8px; border-radius: 50%; background: var(--_muted); }
.status[data-state="ready"] .dot { background: var(--_ok); }
.status[data-state="running"] .dot { background: var(--_accent); animation: pulse 1.2s ease-in-out infinite; }
.status[data-state="booting"] .dot { background: #f79009; animation: pulse 1.2s ease-in-out infinite; }
.status[data-state="error"] .dot { background: var(--_error); }
@keyframes pulse { 50% { opacity: 0.35; } }
.ghost { display: inline-flex; align-items: center; gap: 6px; padding: 6px 10px; border: 1px solid var(--_border); border-radius: 8px; background: var(--_bg); cursor: pointer; font-size: 0.9em; }
.ghost:hover { background: var(--_surface); }
.ghost[aria-expanded="true"] { background: var(--_surface); }
.ghost:disabled { opacity: 0.5; cursor: default; }

/* boot progress ------------------------------------------------------------ */
.boot { padding: 10px 16px 12px; border-bottom: 1px solid var(--_border); background: var(--_surface); }
.boot-label { display: flex; justify-content: space-between; gap: 12px; font-size: 0.86em; color: var(--_muted); margin-bottom: 6px; }
.bar { height: 6px; border-radius: 999px; background: color-mix(in srgb, var(--_accent) 14%, transparent); overflow: hidden; }
.fill { height: 100%; width: 0; border-radius: inherit; background: var(--_accent); transition: width 0.35s ease; }

/* body ---------------------------------------------------------------------- */
.body { flex: 1; position: relative; display: grid; grid-template-columns: minmax(0, 1fr) minmax(220px, 32%); min-height: 0; }
.root[data-files="closed"] .body, .root[data-files="none"] .body { grid-template-columns: minmax(0, 1fr); }
.root[data-files="closed"] .files, .root[data-files="none"] .files { display: none; }
.chat { display: grid; grid-template-rows: minmax(0, 1fr) auto; min-height: 0; min-width: 0; }
.log { overflow-y: auto; padding: 18px 18px 8px; scroll-behavior: smooth; overscroll-behavior: contain; }

/* empty state */
.empty { max-width: 460px; margin: 6% auto 0; text-align: center; color: var(--_muted); }
.empty .mark { width: 44px; height: 44px; border-radius: 14px; margin: 0 auto 12px; }
.empty .mark svg { width: 24px; height: 24px; }
.empty h2 { margin: 0 0 4px; color: var(--_fg); font-size: 1.25em; letter-spacing: -0.01em; }
.empty p { margin: 0 0 14px; }
.chips { display: flex; flex-wrap: wrap; justify-content: center; gap: 6px; margin-bottom: 18px; }
.chip { font: 0.82em var(--_mono); padding: 2px 8px; border-radius: 6px; background: var(--_surface); border: 1px solid var(--_border); color: var(--_fg); }
.suggestions { display: grid; gap: 8px; }
.suggestion { text-align: left; padding: 10px 12px; border: 1px solid var(--_border); border-radius: 10px; background: var(--_bg); cursor: pointer; color: var(--_fg); }
.suggestion:hover:not(:disabled) { border-color: var(--_accent); background: var(--_user-bg); }
.suggestion:disabled { opacity: 0.6; cursor: default; }

/* messages */
.msg { display: flex; gap: 10px; margin: 0 0 18px; }
.msg.user { justify-content: flex-end; }
.bubble { max-width: 82%; padding: 9px 13px; border-radius: 14px 14px 4px 14px; background: var(--_user-bg); color: var(--_user-fg); white-space: pre-wrap; overflow-wrap: anywhere; }
.msg.assistant .mark { width: 26px; height: 26px; margin-top: 1px; }
.parts { flex: 1; min-width: 0; display: grid; grid-template-columns: minmax(0, 1fr); gap: 8px; }
.md { overflow-wrap: anywhere; }
.md > :first-child { margin-top: 0; }
.md > :last-child { margin-bottom: 0; }
/* A long answer: blocks out of view are not laid out or painted (a 20 MB answer stays cheap). */
.md > * { content-visibility: auto; contain-intrinsic-size: auto 3em; }
.md p, .md ul, .md ol, .md blockquote, .md pre, .md .table-scroll { margin: 0 0 0.7em; }
.md h3, .md h4, .md h5, .md h6 { margin: 0.9em 0 0.4em; line-height: 1.3; }
.md h3 { font-size: 1.2em; } .md h4 { font-size: 1.08em; } .md h5, .md h6 { font-size: 1em; }
.md ul, .md ol { padding-left: 1.4em; }
.md li + li { margin-top: 0.2em; }
.md a { color: var(--_accent); }
/* where a link whose text names another site really goes (markdown.mjs) */
.md .link-dest { font: 0.86em var(--_mono); color: var(--_error); white-space: nowrap; }
/* a hidden character in a name, path or tool text, shown as ⟨U+202E⟩ (widget-dom.mjs) */
.hidden-char { font: 0.82em var(--_mono); padding: 0 2px; border-radius: 3px; color: var(--_error); background: color-mix(in srgb, var(--_error) 12%, transparent); white-space: nowrap; }
.md code { font: 0.88em var(--_mono); padding: 0.1em 0.35em; border-radius: 5px; background: var(--_surface); border: 1px solid var(--_border); }
.md pre { position: relative; padding: 12px 14px; border-radius: 10px; background: var(--_code-bg); color: var(--_code-fg); overflow-x: auto; line-height: 1.45; }
.md pre code { padding: 0; border: 0; background: none; color: inherit; font-size: 0.86em; }
.md pre[data-lang]::before { content: attr(data-lang); position: absolute; top: 6px; right: 10px; font: 0.72em var(--_font); opacity: 0.55; }
.md blockquote { padding-left: 12px; border-left: 3px solid var(--_border); color: var(--_muted); }
.md hr { border: 0; border-top: 1px solid var(--_border); margin: 1em 0; }
.md .table-scroll { overflow-x: auto; }
.md table { border-collapse: collapse; font-size: 0.94em; }
.md th, .md td { border: 1px solid var(--_border); padding: 4px 10px; text-align: left; }
.md th { background: var(--_surface); font-weight: 600; }
.streaming > :is(p, h3, h4, h5, h6):last-child::after,
.streaming > :is(ul, ol):last-child > li:last-child::after,
.streaming > blockquote:last-child > :last-child::after,
.streaming > pre:last-child > code::after { content: ""; display: inline-block; width: 7px; height: 1.05em; margin-left: 2px; vertical-align: text-bottom; background: var(--_accent); animation: blink 1s steps(2) infinite; }
@keyframes blink { 50% { opacity: 0; } }
.thinking { display: inline-flex; gap: 4px; padding: 8px 0; }
.thinking span { width: 6px; height: 6px; border-radius: 50%; background: var(--_muted); animation: bounce 1.2s infinite ease-in-out; }
.thinking span:nth-child(2) { animation-delay: 0.15s; } .thinking span:nth-child(3) { animation-delay: 0.3s; }
@keyframes bounce { 0%, 60%, 100% { transform: translateY(0); opacity: 0.5; } 30% { transform: translateY(-4px); opacity: 1; } }

/* reasoning and tool cards */
details.card { border: 1px solid var(--_border); border-radius: 10px; background: var(--_surface); overflow: hidden; }
details.card > summary { display: flex; align-items: center; gap: 8px; padding: 7px 10px; cursor: pointer; list-style: none; font-size: 0.92em; min-width: 0; }
details.card > summary::-webkit-details-marker { display: none; }
details.card > summary:focus-visible { outline-offset: -2px; border-radius: 10px; }
.chev { transition: transform 0.15s ease; color: var(--_muted); width: 14px; height: 14px; }
details[open] > summary .chev { transform: rotate(90deg); }
.tool-icon { display: grid; place-items: center; width: 20px; height: 20px; border-radius: 6px; flex: none; background: color-mix(in srgb, var(--_accent) 14%, transparent); color: var(--_accent); }
.tool-icon svg { width: 12px; height: 12px; stroke-width: 2.5; }
.tool[data-state="ok"] .tool-icon { background: color-mix(in srgb, var(--_ok) 15%, transparent); color: var(--_ok); }
.tool[data-state="error"] { border-color: color-mix(in srgb, var(--_error) 45%, var(--_border)); }
.tool[data-state="error"] .tool-icon { background: color-mix(in srgb, var(--_error) 15%, transparent); color: var(--_error); }
.tool[data-state="running"] .tool-icon svg { animation: spin 0.9s linear infinite; }
@keyframes spin { to { transform: rotate(360deg); } }
.tool-name { font: 600 0.92em var(--_mono); }
.tool-arg { font: 0.9em var(--_mono); color: var(--_muted); white-space: nowrap; overflow: hidden; text-overflow: ellipsis; min-width: 0; flex: 1; }
.tool-status { font-size: 0.85em; color: var(--_muted); white-space: nowrap; }
.tool[data-state="error"] .tool-status { color: var(--_error); }
.card-body { border-top: 1px solid var(--_border); padding: 8px 10px 10px; display: grid; gap: 8px; background: var(--_bg); }
.label { font-size: 0.76em; font-weight: 600; text-transform: uppercase; letter-spacing: 0.05em; color: var(--_muted); margin-bottom: 3px; }
.args { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 4px 10px; margin: 0; font-size: 0.9em; }
.args dt { font-family: var(--_mono); color: var(--_muted); }
.args dd { margin: 0; font-family: var(--_mono); overflow-wrap: anywhere; white-space: pre-wrap; }
pre.out { margin: 0; padding: 8px 10px; border-radius: 8px; background: var(--_surface); font: 0.86em/1.45 var(--_mono); white-space: pre-wrap; overflow-wrap: anywhere; max-height: 320px; overflow: auto; }
.tool[data-state="error"] pre.out { color: var(--_error); background: color-mix(in srgb, var(--_error) 7%, var(--_bg)); }
.more { justify-self: start; border: 0; background: none; color: var(--_accent); cursor: pointer; padding: 0; font-size: 0.88em; }
.reasoning-text { white-space: pre-wrap; color: var(--_muted); font-size: 0.92em; }
.reasoning > summary { color: var(--_muted); }

/* notices and run notes */
.notice { border: 1px solid var(--_border); border-radius: 10px; padding: 10px 12px; background: var(--_surface); margin: 0 0 16px; }
.notice.error { border-color: color-mix(in srgb, var(--_error) 40%, var(--_border)); background: color-mix(in srgb, var(--_error) 6%, var(--_bg)); }
.notice-title { font-weight: 600; margin-bottom: 2px; }
/* mixed toward the text colour: the error hue at a contrast of 4.5:1 or more on the tint */
.notice.error .notice-title { color: color-mix(in srgb, var(--_error) 75%, var(--_fg)); }
.notice p { margin: 2px 0 0; overflow-wrap: anywhere; }
.notice .detail { font: 0.86em var(--_mono); color: var(--_muted); white-space: pre-wrap; }
.notice .actions { margin-top: 8px; display: flex; gap: 8px; }
.meta { font-size: 0.8em; color: var(--_muted); }

/* a permission rule's question, under its tool card (widget-approval.mjs) */
.approval { border: 1px solid color-mix(in srgb, var(--_accent) 45%, var(--_border)); border-radius: 10px; padding: 10px 12px; margin-top: 6px; background: color-mix(in srgb, var(--_accent) 5%, var(--_bg)); display: grid; gap: 6px; min-width: 0; }
.approval-title { font-weight: 600; overflow-wrap: anywhere; }
.approval-rule { font: 0.82em var(--_mono); color: var(--_muted); }
.approval-command { margin: 0; max-height: 240px; overflow: auto; font: 0.85em/1.45 var(--_mono); white-space: pre-wrap; overflow-wrap: anywhere; border: 1px solid var(--_border); border-radius: 8px; background: var(--_bg); padding: 6px 10px; }
.approval-command:focus-visible { outline: 2px solid var(--_focus); outline-offset: 2px; }
.approval-diff { margin: 0; max-height: 260px; overflow: auto; font: 0.82em/1.45 var(--_mono); border: 1px solid var(--_border); border-radius: 8px; background: var(--_bg); padding: 6px 0; }
.approval-diff .dl { display: block; padding: 0 10px; white-space: pre; }
.approval-diff .add { background: color-mix(in srgb, var(--_ok) 14%, transparent); }
.approval-diff .del { background: color-mix(in srgb, var(--_error) 12%, transparent); }
.approval-diff .hunk, .approval-diff .more { color: var(--_muted); }
.approval-actions { display: flex; flex-wrap: wrap; gap: 8px; }
.approval-button { font: inherit; font-size: 0.9em; padding: 5px 12px; border-radius: 8px; border: 1px solid var(--_border); background: var(--_surface); color: inherit; cursor: pointer; }
.approval-button.primary { background: var(--_accent); border-color: var(--_accent); color: var(--_accent-fg); }
.approval-button.danger { color: var(--_error); }
.approval-button:focus-visible { outline: 2px solid var(--_focus); outline-offset: 2px; }
.approval-button:disabled { opacity: 0.55; cursor: default; }
.approval-status { font-size: 0.85em; color: var(--_muted); }
.approval-status:empty { display: none; }
.approval[data-state="deny"] .approval-status { color: var(--_error); }

/* "Undo this run" (widget-undo.mjs) */
.undo-box { display: grid; gap: 6px; justify-items: start; }
.msg.subagent { display: block; margin: 0; }
.subagent-card { margin: 8px 0 0; }
.subagent-card > .card-body { padding: 8px 10px 2px; }
.plan-box { border: 1px solid var(--_border); border-radius: 10px; padding: 10px 12px; background: var(--_surface); margin: 0 0 16px; display: grid; gap: 6px; }
.plan-box .plan-text { width: 100%; box-sizing: border-box; max-height: none; padding: 8px 10px; border: 1px solid var(--_border); border-radius: 8px; background: var(--_bg); font: 0.92em var(--_mono); line-height: 1.45; }
.plan-box .plan-text:focus-visible { outline: 2px solid var(--_accent); outline-offset: 1px; }
.plan-box .actions { display: flex; align-items: center; gap: 10px; }
.plan-toggle { flex: none; align-self: center; font: inherit; font-size: 0.82em; padding: 4px 10px; border-radius: 999px; border: 1px solid var(--_border); background: var(--_surface); color: var(--_muted); cursor: pointer; }
.plan-toggle[aria-pressed="true"] { background: color-mix(in srgb, var(--_accent) 14%, var(--_bg)); border-color: var(--_accent); color: var(--_accent); font-weight: 600; }
.undo-open { font: inherit; font-size: 0.85em; padding: 3px 10px; border-radius: 8px; border: 1px solid var(--_border); background: var(--_surface); color: inherit; cursor: pointer; }
.undo-open:focus-visible { outline: 2px solid var(--_focus); outline-offset: 2px; }
.undo-open:disabled { opacity: 0.55; cursor: default; }
.undo { justify-self: stretch; border: 1px solid var(--_border); border-radius: 10px; padding: 10px 12px; background: var(--_surface); display: grid; gap: 6px; min-width: 0; }
.undo-list { list-style: none; margin: 0; padding: 0; display: grid; gap: 4px; font-size: 0.9em; }
.undo-list li { display: grid; grid-template-columns: auto 1fr; gap: 2px 8px; align-items: baseline; min-width: 0; }
.undo-list .approval-diff { grid-column: 1 / -1; max-height: 180px; }
.undo-kind { font-size: 0.8em; color: var(--_muted); text-transform: uppercase; letter-spacing: 0.03em; }
.undo-path { font-family: var(--_mono); overflow-wrap: anywhere; }
.undo-status { font-size: 0.85em; color: var(--_muted); }
.undo[data-state="reverted"] .undo-status { color: var(--_ok); }
.undo[data-state="failed"] .undo-status { color: var(--_error); }

/* composer ------------------------------------------------------------------ */
.composer { padding: 10px 14px 12px; }
.tray { display: flex; flex-wrap: wrap; gap: 8px; margin: 0 0 8px; }
.tray[hidden] { display: none; }
.attachment { position: relative; display: flex; align-items: center; height: 56px; max-width: 180px; border: 1px solid var(--_border); border-radius: 8px; overflow: hidden; background: var(--_bg); }
.attachment img { height: 100%; width: auto; max-width: 180px; object-fit: cover; display: block; }
.attachment .file-chip { padding: 0 26px 0 10px; font-size: 12px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.attachment .remove { position: absolute; top: 2px; right: 2px; width: 20px; height: 20px; border: 0; border-radius: 50%; background: color-mix(in srgb, var(--_fg) 70%, transparent); color: var(--_bg); font-size: 14px; line-height: 20px; padding: 0; cursor: pointer; }
.user-images { display: flex; flex-wrap: wrap; gap: 6px; margin-bottom: 6px; }
.user-images img { max-height: 160px; max-width: 100%; border-radius: 8px; display: block; }
.user-images .image-changed { display: flex; align-items: center; min-height: 48px; max-width: 240px; padding: 6px 10px; border: 1px dashed var(--_border); border-radius: 8px; font-size: 12px; overflow-wrap: anywhere; }
.field { display: flex; align-items: flex-end; gap: 8px; padding: 6px 6px 6px 12px; border: 1px solid var(--_border); border-radius: 12px; background: var(--_bg); transition: border-color 0.15s, box-shadow 0.15s; }
.field:focus-within { border-color: var(--_accent); box-shadow: 0 0 0 3px color-mix(in srgb, var(--_accent) 18%, transparent); }
textarea:focus-visible { outline: none; }
textarea { flex: 1; resize: none; border: 0; outline: 0; background: none; color: inherit; font: inherit; padding: 6px 0; max-height: 180px; min-height: 24px; line-height: 1.45; }
textarea::placeholder { color: var(--_muted); }
.send, .stop { display: grid; place-items: center; width: 34px; height: 34px; border: 0; border-radius: 9px; cursor: pointer; flex: none; }
.send { background: var(--_accent); color: var(--_accent-fg); }
.send:disabled { background: color-mix(in srgb, var(--_accent) 30%, var(--_surface)); cursor: default; }
.stop { background: var(--_fg); color: var(--_bg); }
.stop svg { fill: currentColor; stroke: none; }
.hint { margin-top: 5px; font-size: 0.76em; color: var(--_muted); text-align: center; }
kbd { font: 0.92em var(--_mono); padding: 0 4px; border: 1px solid var(--_border); border-radius: 4px; background: var(--_surface); }

/* files panel --------------------------------------------------------------- */
.files { display: grid; grid-template-rows: auto minmax(0, 1fr) auto; min-height: 0; border-left: 1px solid var(--_border); background: var(--_surface); }
.files-head { display: flex; align-items: center; gap: 6px; padding: 10px 10px 8px 14px; }
.files-head h2 { margin: 0; font-size: 0.8em; text-transform: uppercase; letter-spacing: 0.06em; color: var(--_muted); flex: 1; }
.files-head .path { font: 0.82em var(--_mono); color: var(--_muted); font-weight: 400; text-transform: none; letter-spacing: 0; margin-left: 4px; }
.files-head .git { font: 0.82em var(--_mono); color: var(--_muted); font-weight: 400; text-transform: none; letter-spacing: 0; margin-left: 8px; white-space: nowrap; }
.files-head .git::before { content: "\\2387  "; }
.files-head .git.dirty { color: var(--_accent); }
.icon-btn { display: grid; place-items: center; width: 28px; height: 28px; border: 1px solid transparent; border-radius: 7px; background: none; cursor: pointer; color: var(--_muted); }
.icon-btn:hover { background: var(--_bg); border-color: var(--_border); color: var(--_fg); }
.tree { overflow: auto; padding: 0 6px 10px; }
.tree ul { list-style: none; margin: 0; padding: 0; }
.tree ul ul { padding-left: 14px; }
/* a file row out of view is not laid out or painted (a folder draws up to 500; a burst of
   changes redraws some each frame); 24px is its height until it has been drawn once */
.tree .file-row { content-visibility: auto; contain-intrinsic-size: auto 24px; }
.entry { display: flex; align-items: center; gap: 6px; width: 100%; padding: 4px 8px; border: 0; border-radius: 6px; background: none; cursor: pointer; text-align: left; font: 0.88em var(--_mono); color: var(--_fg); }
.entry:hover { background: var(--_bg); }
.entry[aria-current="true"] { background: color-mix(in srgb, var(--_accent) 12%, var(--_bg)); }
.entry .name { flex: 1; min-width: 0; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.entry .size { color: var(--_muted); font-size: 0.88em; }
.entry svg { width: 14px; height: 14px; color: var(--_muted); }
.entry.file { padding-left: 28px; }
.entry.dir svg:first-child { width: 12px; height: 12px; transition: transform 0.15s ease; }
.entry.dir[aria-expanded="true"] svg:first-child { transform: rotate(90deg); }
.entry.fresh .name { color: var(--_accent); font-weight: 600; }
.entry.fresh::after { content: ""; width: 6px; height: 6px; border-radius: 50%; background: var(--_accent); flex: none; }
.tree .row { display: flex; align-items: center; gap: 2px; }
.tree .row .entry { flex: 1; min-width: 0; }
.tree .del { width: 24px; height: 24px; flex: none; }
.tree .del svg { width: 14px; height: 14px; }
@media (hover: hover) {
  .tree .del { opacity: 0; }
  .tree .row:hover .del, .tree .del:focus-visible { opacity: 1; }
}
.tree .confirm { display: flex; align-items: center; gap: 4px; flex: none; font-size: 0.8em; color: var(--_error); white-space: nowrap; }
.tree .confirm button { padding: 2px 7px; border: 1px solid var(--_border); border-radius: 6px; background: var(--_bg); color: var(--_fg); cursor: pointer; font: inherit; }
.tree .confirm .yes { border-color: var(--_error); color: var(--_error); }
.files-empty { padding: 14px; color: var(--_muted); font-size: 0.88em; text-align: center; }
.tree .more { margin: 2px 0 4px 28px; padding: 3px 10px; border: 1px solid var(--_border); border-radius: 6px; background: var(--_bg); color: var(--_fg); cursor: pointer; font-size: 0.82em; }
.tree .more:hover { border-color: var(--_accent); }
.files-loading { padding: 4px 8px 4px 42px; color: var(--_muted); font-size: 0.82em; }
.viewer { display: grid; grid-template-rows: auto minmax(0, 1fr); min-height: 0; border-top: 1px solid var(--_border); background: var(--_bg); }
.viewer-head { display: flex; align-items: center; gap: 4px; padding: 6px 6px 6px 12px; border-bottom: 1px solid var(--_border); }
.viewer-head .vpath { flex: 1; min-width: 0; font: 600 0.86em var(--_mono); white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.viewer-head .vsize { color: var(--_muted); font-size: 0.8em; white-space: nowrap; }
.viewer-body { overflow: auto; min-height: 0; }
.viewer pre { margin: 0; padding: 10px 12px; overflow: auto; font: 0.84em/1.5 var(--_mono); white-space: pre; tab-size: 4; }
.viewer .note { padding: 12px; color: var(--_muted); font-size: 0.88em; }
.files.split { grid-template-rows: auto minmax(0, 0.9fr) minmax(0, 1.1fr) auto; }
.files-foot { padding: 6px 14px 8px; font-size: 0.8em; color: var(--_muted); min-height: 1.6em; border-top: 1px solid var(--_border); }
.files-foot.error { color: var(--_error); }
.files-foot:empty { padding: 0; min-height: 0; border-top: 0; }
.files.dragging { outline: 2px dashed var(--_accent); outline-offset: -6px; }

/* thread list (a popover over the conversation) ------------------------------- */
.threads { position: absolute; top: 8px; right: 12px; z-index: 3; display: grid; grid-template-rows: auto minmax(0, 1fr) auto; width: min(340px, calc(100% - 24px)); max-height: calc(100% - 16px); border: 1px solid var(--_border); border-radius: 10px; background: var(--_bg); box-shadow: 0 12px 32px -12px rgb(16 24 40 / 30%); }
.threads-head { display: flex; align-items: center; gap: 8px; padding: 10px 10px 8px 14px; border-bottom: 1px solid var(--_border); }
.threads-head h2 { margin: 0; flex: 1; font-size: 0.8em; text-transform: uppercase; letter-spacing: 0.06em; color: var(--_muted); }
.thread-items { list-style: none; margin: 0; padding: 6px; overflow: auto; }
.thread-items li { display: flex; align-items: center; gap: 4px; }
.thread { flex: 1; min-width: 0; display: grid; gap: 1px; padding: 6px 10px; border: 0; border-radius: 7px; background: none; cursor: pointer; text-align: left; }
.thread:hover { background: var(--_surface); }
.thread[aria-current="true"] { background: color-mix(in srgb, var(--_accent) 12%, var(--_bg)); }
/* on the current row's tint the muted text moves toward the text colour: 4.5:1 or more */
.entry[aria-current="true"] .size, .thread[aria-current="true"] .thread-meta { color: color-mix(in srgb, var(--_muted) 70%, var(--_fg)); }
.thread-title { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; font-weight: 550; }
.thread-meta { font-size: 0.8em; color: var(--_muted); }
.thread-items .delete { width: auto; min-width: 28px; padding: 0 6px; font-size: 0.8em; }
@media (hover: hover) {
  .thread-items .rename { opacity: 0; }
  .thread-items li:hover .rename, .thread-items .rename:focus-visible { opacity: 1; }
}
.thread-rename-form { flex: 1; padding: 3px 4px; }
.thread-rename { width: 100%; padding: 5px 8px; border: 1px solid var(--_accent); border-radius: 7px; background: var(--_bg); color: var(--_fg); font: inherit; }
.thread-items .delete[data-confirm="yes"] { color: var(--_error); border-color: var(--_error); }
.threads-foot { padding: 6px 14px 8px; font-size: 0.8em; color: var(--_error); }
.threads-foot:empty { padding: 0; }

/* the Preview (widget-preview.mjs): in the Files panel's place */
.preview { display: none; grid-template-rows: auto minmax(0, 1fr) auto; min-height: 0; border-left: 1px solid var(--_border); background: var(--_surface); }
.root[data-preview="open"] .preview { display: grid; }
.root[data-preview="open"] .body { grid-template-columns: minmax(0, 1fr) minmax(260px, 48%); }
.preview-stage { position: relative; min-height: 0; background: #fff; border-top: 1px solid var(--_border); }
.preview-foot { border-top: 1px solid var(--_border); padding: 6px 10px 8px 14px; display: grid; align-content: start; gap: 4px; max-height: 11em; overflow: auto; font-size: 0.82em; }
.preview-state { color: var(--_muted); }
.preview-state[data-state="error"] { color: var(--_error); }
.preview-console { list-style: none; margin: 0; padding: 0; display: grid; gap: 2px; font-family: var(--_mono); }
.preview-console li { overflow-wrap: anywhere; white-space: pre-wrap; }
.preview-console li[data-level="error"] { color: var(--_error); }
.preview-console li[data-level="log"] { color: var(--_muted); }
.preview-level { font-family: var(--_font); font-size: 0.85em; text-transform: uppercase; letter-spacing: 0.03em; }

/* narrow: the files panel covers the conversation when open */
@container (max-width: 620px) {
  .body { grid-template-columns: minmax(0, 1fr); }
  .files, .preview { position: absolute; inset: 0; z-index: 2; border-left: 0; }
  .root[data-preview="open"] .body { grid-template-columns: minmax(0, 1fr); }
  .model { display: none; }
  .bubble { max-width: 92%; }
}
@container (max-width: 460px) {
  header .ghost .btn-label { display: none; }
  header { gap: 6px; }
}
/* touch: every target at least 44 × 44 CSS px (WCAG 2.5.5); a mouse keeps the layout above */
@media (pointer: coarse) {
  .ghost, .icon-btn, .approval-button, .undo-open, .more, .tree .confirm button, .thread,
  .thread-items .delete, .thread-items .rename, .suggestion, summary, .plan-toggle { min-width: 44px; min-height: 44px; }
  .send, .stop, .tree .del { width: 44px; height: 44px; }
  .entry, textarea, .thread-rename, .viewer pre { min-height: 44px; }
  .attachment .remove { top: 0; right: 0; width: 44px; height: 44px; padding: 12px; background-clip: content-box; }
}
@media (prefers-reduced-motion: reduce) {
  *, *::before, *::after { animation: none !important; transition: none !important; scroll-behavior: auto !important; }
}
`;
