"""The options a page passes to ``createHarness``, as the worker receives them.

Validated on arrival; a bad option is a :class:`UsageError` whose message names the
option and the fix, and the boot fails with it.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from .errors import UsageError
from .models.configs import AnthropicMessagesConfig, OpenAIChatConfig
from .models.scripted import ScriptedConfig
from .shell import NetworkPolicy, ShellConfig
from .tools.page import PageToolSpec

BUILTIN_TOOL_NAMES = ("read", "write", "edit", "ls", "grep", "find")

ModelConfig = Annotated[
    ScriptedConfig | OpenAIChatConfig | AnthropicMessagesConfig, Field(discriminator="api")
]


class HarnessConfig(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    model: ModelConfig
    system_prompt: str | None = Field(
        default=None, description="Replaces the default system prompt when given."
    )
    max_steps: int = Field(default=50, ge=1, le=1000)
    builtin_tools: list[str] = Field(default_factory=lambda: list(BUILTIN_TOOL_NAMES))
    shell: bool | ShellConfig = Field(default=False, description="true, or the shell's limits")
    page_tools: list[PageToolSpec] = Field(default_factory=list)
    network: NetworkPolicy | None = Field(
        default=None, description="What the model's code may fetch (shell only); off by default.")

    @property
    def shell_config(self) -> ShellConfig | None:
        """The shell's settings, or None when the shell is off."""
        if self.shell is False:
            return None
        shell = ShellConfig() if self.shell is True else self.shell
        return shell.model_copy(update={"network": self.network})


def parse_config(config_json: str) -> HarnessConfig:
    try:
        config = HarnessConfig.model_validate_json(config_json)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in err["loc"] if not str(p).startswith("function-"))
        raise UsageError(f"invalid option '{where}': {err['msg']}") from None
    names = [t.name for t in config.page_tools]
    if len(names) != len(set(names)):
        raise UsageError(f"two page tools have the same name: {names}; names must be unique")
    unknown = [n for n in config.builtin_tools if n not in BUILTIN_TOOL_NAMES]
    if unknown:
        raise UsageError(
            f"unknown built-in tool(s) {unknown} in builtinTools; "
            f"choose from {list(BUILTIN_TOOL_NAMES)}"
        )
    return config
