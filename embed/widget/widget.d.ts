// Types of the <pyharness-chat> widget (widget.mjs). Importing the module defines the
// element; reference: docs/embedding.md, "The widget".
import type {
  Harness,
  HarnessError,
  HarnessOptions,
  ModelOptions,
  ProviderOptions,
  PyharnessEvent,
  RunResult,
} from "../page/pyharness.d.ts";

/** The model, as far as the attributes do not give it (api, base-url, model): the
 * fields of `ModelOptions` (pyharness.d.ts), each optional. */
export interface WidgetModelOptions extends Partial<ProviderOptions> {
  api?: ModelOptions["api"];
  thinkingBudget?: Extract<ModelOptions, { api: "anthropic-messages" }>["thinkingBudget"];
  /** For api "scripted". */
  turns?: Extract<ModelOptions, { api: "scripted" }>["turns"];
}

/**
 * The `options` property: what attributes cannot carry. Merged over the attributes
 * (a field here wins); setting it restarts the harness.
 */
export interface PyharnessChatOptions extends Partial<Omit<HarnessOptions, "model">> {
  model?: WidgetModelOptions;
}

export interface PyharnessChatEventMap extends HTMLElementEventMap {
  /** The harness booted; seed files with `detail.harness.fs` (the files panel follows them by itself). */
  "pyharness-ready": CustomEvent<{ harness: Harness }>;
  /** Booting failed; the widget shows the error and a "Try again" button. */
  "pyharness-boot-error": CustomEvent<{ error: HarnessError | Error }>;
  /** Every event of every run, as it streams. */
  "pyharness-event": CustomEvent<PyharnessEvent>;
  /** A run ended (any stop reason). */
  "pyharness-run-end": CustomEvent<RunResult>;
}

/** `<pyharness-chat>`; attributes: api, model, base-url, system-prompt,
 * system-prompt-from, shell, max-steps, bundle-url, heading, placeholder, files, theme. */
export declare class PyharnessChat extends HTMLElement {
  /** What attributes cannot carry (API key, page tools, fetch, shell limits, scripted turns). */
  options: PyharnessChatOptions;
  /** Prompts offered as buttons before the first message. */
  suggestions: string[];
  /** The running harness; null while booting or after a failure. */
  readonly harness: Harness | null;
  /** Resolves with the harness once booted; rejects if booting fails. */
  readonly ready: Promise<Harness>;
  /** True while a run is going. */
  readonly running: boolean;
  /** Send a prompt as if typed; resolves with the run's result. */
  send(text: string): Promise<RunResult>;
  /** Cancel the current run, if any. */
  cancel(): void;
  /** The harness started again (a new worker). A persistent workspace comes back as it
   * was (files, threads, the conversation redrawn); with storage "memory" all is dropped. */
  restart(): Promise<Harness>;
  /** Re-read the files panel (after the page changed files through `harness.fs`). */
  refreshFiles(): Promise<void>;

  addEventListener<K extends keyof PyharnessChatEventMap>(
    type: K,
    listener: (this: PyharnessChat, ev: PyharnessChatEventMap[K]) => unknown,
    options?: boolean | AddEventListenerOptions,
  ): void;
  addEventListener(
    type: string,
    listener: EventListenerOrEventListenerObject,
    options?: boolean | AddEventListenerOptions,
  ): void;
  removeEventListener<K extends keyof PyharnessChatEventMap>(
    type: K,
    listener: (this: PyharnessChat, ev: PyharnessChatEventMap[K]) => unknown,
    options?: boolean | EventListenerOptions,
  ): void;
  removeEventListener(
    type: string,
    listener: EventListenerOrEventListenerObject,
    options?: boolean | EventListenerOptions,
  ): void;
}

declare global {
  interface HTMLElementTagNameMap {
    "pyharness-chat": PyharnessChat;
  }
}
