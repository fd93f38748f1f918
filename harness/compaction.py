"""Long conversations: keep every model request inside the model's context window.

Before each request the agent asks :func:`compact` whether the request fits. When it does
not, the history (the one the model sees; the page's transcript keeps everything) is
shortened in two steps, as pi and Claude Code do:

1. older tool outputs are cut to their head and tail (the latest turn's are kept);
2. if that is not enough, older turns are replaced by a summary **written by the model
   itself**, keeping the system prompt, the latest turns whole, and every file path
   the summarised part mentioned.

The cut is always made where the history is valid for any provider (before a user
message or an assistant turn, never between a tool call and its result), and the
summary goes first as a user message. Token counts are estimates (characters / 4):
the window is treated as a budget, with room left for the answer.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from .images import IMAGE_TOKENS, placeholder
from .messages import AssistantMessage, Message, ToolResult, UserMessage
from .models.base import Done, Failed, Model, ModelRequest, TextPart, ToolSpec

CHARS_PER_TOKEN = 4
KEEP_OUTPUT_CHARS = 1_000  # of an older tool output: head and tail
SUMMARY_INPUT_CHARS = 200_000  # of the part to summarise, sent to the model
SUMMARY_PREFIX = "[Summary of the earlier conversation, written when it was compacted]"
SUMMARY_SYSTEM = (
    "You summarise a coding agent's conversation so that the agent can continue it. "
    "Keep: what the user asked for and decided, what was done and what is left, facts "
    "found, errors seen, and every file path. Be concise; use short bullet points."
)
_PATH = re.compile(r"(?<![\w/.-])((?:/work/|\./)?(?:[\w.-]+/)*[\w-]+\.[A-Za-z0-9]{1,8})(?![\w/-])")
# What providers say when a request does not fit (OpenAI, Anthropic, llama.cpp, vLLM).
_TOO_LONG = re.compile(r"context.{0,40}(length|window|too long|exceed)|too many tokens|"
                       r"prompt is too long|maximum.{0,20}tokens|input.{0,20}too long", re.I)

# Well-known context windows by model name prefix (tokens); others: DEFAULT_WINDOW.
KNOWN_WINDOWS = (
    ("gpt-4.1", 1_047_576), ("gpt-5", 400_000), ("gpt-4o", 128_000), ("o3", 200_000),
    ("o4", 200_000), ("claude", 200_000), ("gemini", 1_048_576), ("qwen", 32_768),
    ("llama", 128_000), ("mistral", 32_768), ("deepseek", 128_000),
)
DEFAULT_WINDOW = 128_000


def default_window(model_name: str) -> int:
    name = model_name.lower().rsplit("/", 1)[-1]
    return next((w for prefix, w in KNOWN_WINDOWS if name.startswith(prefix)), DEFAULT_WINDOW)


def is_context_error(message: str) -> bool:
    return bool(_TOO_LONG.search(message))


@dataclass(frozen=True)
class Compacted:
    before_tokens: int
    after_tokens: int
    shortened_outputs: int
    summarized_messages: int


IMAGE_CHARS = IMAGE_TOKENS * CHARS_PER_TOKEN  # an image, in the estimate's characters


def estimate(system: str, history: list[Message], tools: list[ToolSpec]) -> int:
    chars = fixed_chars(system, tools) + sum(message_chars(m) for m in history)
    return chars // CHARS_PER_TOKEN + 1


def fixed_chars(system: str, tools: list[ToolSpec]) -> int:
    """What every request of a run holds besides the history: the system prompt, the tools."""
    return len(system) + len(json.dumps([t.parameters for t in tools])) + sum(
        len(t.name) + len(t.description) for t in tools)


def message_chars(m: Message) -> int:
    """One message's part of :func:`estimate`, in characters."""
    if isinstance(m, UserMessage):
        return 16 + len(m.text) + len(m.images) * IMAGE_CHARS
    if isinstance(m, AssistantMessage):
        return 16 + len(m.text) + sum(len(c.arguments) + len(c.name) + 24 for c in m.tool_calls)
    return 16 + len(m.output) + len(m.name) + 24 + len(m.images) * IMAGE_CHARS


async def compact(history: list[Message], system: str, tools: list[ToolSpec], model: Model,
                  budget: int, force: bool = False, before: int | None = None) -> Compacted | None:
    """Shorten ``history`` in place until the request fits ``budget`` tokens (or as far
    as it can). ``force``: the provider refused the request, so shorten even if the
    estimate says it fits. ``before``: the request's :func:`estimate`, when the caller
    keeps it up to date as the history grows (asked before every request, a whole
    estimate each time would cost the history's length). Returns what was done, or None
    when nothing was needed."""
    if before is None:
        before = estimate(system, history, tools)
    if before <= budget and not force:
        return None
    target = min(budget, before * 3 // 4) if force else budget
    shortened = _shorten_outputs(history, system, tools, target, spare_last=not force)
    summarized = 0
    if estimate(system, history, tools) > target:
        summarized = await _summarize(history, system, tools, model, target)
    return Compacted(before, estimate(system, history, tools), shortened, summarized)


def _shorten_outputs(history: list[Message], system: str, tools: list[ToolSpec],
                     target: int, spare_last: bool) -> int:
    """Cut tool outputs to head and tail, oldest first, sparing the latest turn's
    (unless the provider already refused the request). The estimate is taken once and
    lowered by what each cut saves (one pass, not one estimate of the whole history per
    message: a compaction of a long history cost its length squared)."""
    last_turn = len(history)
    if spare_last:
        last_turn = max((i for i, m in enumerate(history) if isinstance(m, AssistantMessage)),
                        default=len(history))
    chars = fixed_chars(system, tools) + sum(message_chars(m) for m in history)
    count = 0
    for i, m in enumerate(history[:last_turn]):
        if chars // CHARS_PER_TOKEN + 1 <= target:
            break
        if isinstance(m, ToolResult) and len(m.output) > 2 * KEEP_OUTPUT_CHARS + 200:
            cut = len(m.output) - 2 * KEEP_OUTPUT_CHARS
            history[i] = m.model_copy(update={"output": (
                f"{m.output[:KEEP_OUTPUT_CHARS]}\n[... {cut:,} characters of this output were "
                f"cut when the conversation was compacted ...]\n{m.output[-KEEP_OUTPUT_CHARS:]}")})
            chars += message_chars(history[i]) - message_chars(m)
            count += 1
    return count


async def _summarize(history: list[Message], system: str, tools: list[ToolSpec], model: Model,
                     target: int) -> int:
    """Replace the oldest messages by one summary, keeping the latest turns whole."""
    cut = _cut_point(history, system, tools, target)
    if cut <= 0:
        return 0
    old = history[:cut]
    summary = await _ask_for_summary(model, old)
    paths = sorted({p for m in old for p in _PATH.findall(_text_of(m))})[:200]
    text = f"{SUMMARY_PREFIX}\n{summary}"
    if paths:
        text += "\n\nFiles mentioned earlier: " + ", ".join(paths)
    images = sorted({i.path for m in old if isinstance(m, UserMessage | ToolResult)
                     for i in m.images})[:200]
    if images:
        text += ("\n\nImages shown earlier (no longer shown; read a file to see it again): "
                 + ", ".join(images))
    history[:cut] = [UserMessage(text=text)]
    return len(old)


def _cut_point(history: list[Message], system: str, tools: list[ToolSpec], target: int) -> int:
    """The latest index to cut before such that the rest, plus a summary, fits half the
    target: a position before a user message or an assistant turn (tool calls and their
    results are never separated). 0 when no such point exists. The rest's estimate is
    summed from the end as the point moves back (one pass)."""
    keep_budget = target // 2
    best = 0
    rest = fixed_chars("", [])  # estimate("", history[i:], []) in characters
    for i in range(len(history) - 1, 0, -1):
        rest += message_chars(history[i])
        if isinstance(history[i], ToolResult):
            continue
        if rest // CHARS_PER_TOKEN + 1 > keep_budget:
            break
        best = i
    if best == 0:  # even the latest turn alone is too big: keep just it
        best = next((i for i in range(len(history) - 1, 0, -1)
                     if not isinstance(history[i], ToolResult)), 0)
    return best


async def _ask_for_summary(model: Model, old: list[Message]) -> str:
    rendered = "\n\n".join(f"{_role(m)}: {_text_of(m)}" for m in old)
    if len(rendered) > SUMMARY_INPUT_CHARS:  # the oldest part matters least
        rendered = "[...]\n" + rendered[-SUMMARY_INPUT_CHARS:]
    request = ModelRequest(SUMMARY_SYSTEM, [UserMessage(text=(
        "Summarise this conversation so far for yourself, to continue it:\n\n" + rendered))],
        [], purpose="summary")
    parts: list[str] = []
    failed = False
    async for part in model.stream(request):
        if isinstance(part, TextPart):
            parts.append(part.delta)
        elif isinstance(part, Failed):
            failed = True
        elif isinstance(part, Done):
            break
    summary = "".join(parts).strip()
    if failed or not summary:  # compaction must not fail the run: a plain digest then
        asked = [m.text for m in old if isinstance(m, UserMessage)]
        summary = "The user asked, in order:\n" + "\n".join(f"- {a[:300]}" for a in asked)
    return summary


def _role(m: Message) -> str:
    return {"user": "User", "assistant": "Assistant", "tool": f"Tool {getattr(m, 'name', '')}"}[
        m.role]


def _text_of(m: Message) -> str:
    # An image is summarized as its file: what the summary replaces names it.
    if isinstance(m, UserMessage):
        return m.text + "".join(f"\n{placeholder(i)}" for i in m.images)
    if isinstance(m, AssistantMessage):
        calls = "".join(f"\n[calls {c.name} {c.arguments[:500]}]" for c in m.tool_calls)
        return m.text + calls
    return m.output[:2000] + "".join(f"\n{placeholder(i)}" for i in m.images)
