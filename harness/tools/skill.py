"""``skill``: a skill the page gave (``createHarness({skills})``), in full, when the model
needs it; only its name and description are in the system prompt (harness/project.py).
Present only when the page gives skills."""

from __future__ import annotations

from pydantic import Field

from ..config import PageSkill
from ..errors import ToolError
from .base import Tool, ToolContext
from .common import StrictParams


class SkillParams(StrictParams):
    name: str = Field(description="The skill's name, as listed in the system prompt")


class SkillTool(Tool):
    name = "skill"
    description = ("The instructions of one of the page's skills (listed in the system "
                   "prompt by name and description): call it when a skill applies.")
    Params = SkillParams

    def __init__(self, skills: list[PageSkill]) -> None:
        self._skills = {s.name: s for s in skills}

    async def run(self, params: SkillParams, ctx: ToolContext) -> str:
        skill = self._skills.get(params.name)
        if skill is None:
            raise ToolError(f"no skill is named {params.name!r}; the page's skills: "
                            + ", ".join(sorted(self._skills)))
        return skill.content
