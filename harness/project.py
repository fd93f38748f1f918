"""What a workspace says about itself: project instructions and skills, read at the start
of every run (an edit applies to the next run).

- ``/work/AGENTS.md`` (and the page's ``instructionFiles``), bounded, goes into the
  system prompt under its own heading.
- Skills: every ``/work/.agents/skills/<name>/SKILL.md`` and the page's ``skills`` are
  listed by name and description only (progressive disclosure): the model reads a
  workspace skill's file, or asks the ``skill`` tool for a page's, when it needs it. A
  skill whose front matter is malformed is skipped, with a note (never a failed run); so
  is a workspace skill named like one of the page's (the page's is the one listed).
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field

from .errors import FsError
from .workspace.jail import Workspace

MAX_INSTRUCTIONS_BYTES = 32 * 1024  # of each instructions file
MAX_SKILLS = 100
MAX_FOLDERS = 1000  # under .agents/skills, looked at for a SKILL.md
MAX_SKILL_BYTES = 64 * 1024  # read of a SKILL.md, for its front matter
MAX_DESCRIPTION = 1024
SKILLS_DIR = ".agents/skills"
SKILL_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_KEY_VALUE = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*)\s*:\s*(.*)$")


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    path: str | None  # the workspace file; None: given by the page


@dataclass
class Project:
    """What one run's system prompt adds: the section, and the problems found (each a
    (key, message): a key seen before is not reported again)."""

    section: str
    problems: list[tuple[str, str]] = field(default_factory=list)


def front_matter(text: str) -> dict[str, str] | str:
    """The ``key: value`` lines between the leading ``---`` lines, or why not."""
    lines = text.lstrip("\ufeff").splitlines()
    if not lines or lines[0].strip() != "---":
        return "no front matter (it starts with a --- line)"
    values: dict[str, str] = {}
    for line in lines[1:]:
        if line.strip() == "---":
            return values
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _KEY_VALUE.match(line)
        if match is None:
            if line.startswith((" ", "\t")) and values:
                continue  # a nested or folded value: not one we read
            return f"a front matter line is not 'key: value': {line.strip()[:80]}"
        key, value = match.group(1).lower(), match.group(2).strip()
        if re.fullmatch(r"[>|][+-]?", value):
            return f"the {key} is a multi-line value; write it on one line"
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        values[key] = value
    return "the front matter has no closing --- line"


def _read(workspace: Workspace, path: str, limit: int) -> tuple[bytes, int] | None:
    """Up to ``limit`` bytes of a workspace file and its size, or None (absent, a
    folder, outside the workspace)."""
    try:
        p = workspace.resolve(path)
        size = os.path.getsize(p.real)
        if not os.path.isfile(p.real):
            return None
        with open(p.real, "rb") as f:
            return f.read(limit), size
    except (FsError, OSError):
        return None


def _whole_characters(data: bytes) -> bytes:
    """``data`` cut back to the last whole UTF-8 character (a cut may split one)."""
    end = len(data)
    back = 0
    while back < 3 and end - back > 0 and (data[end - back - 1] & 0xC0) == 0x80:
        back += 1
    if end - back > 0 and data[end - back - 1] >= 0xC0:  # a lead byte without its tail
        lead = data[end - back - 1]
        need = 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4
        if back + 1 < need:
            return data[:end - back - 1]
    return data


def workspace_skills(workspace: Workspace) -> tuple[list[Skill], list[tuple[str, str]]]:
    """The skills under .agents/skills, and the problems of those skipped."""
    try:
        root = workspace.resolve(SKILLS_DIR)
        names = sorted(os.listdir(root.real)) if os.path.isdir(root.real) else []
    except (FsError, OSError):
        return [], []
    skills: list[Skill] = []
    problems: list[tuple[str, str]] = []
    for name in names[:MAX_FOLDERS]:
        if len(skills) >= MAX_SKILLS:
            break
        path = f"{SKILLS_DIR}/{name}/SKILL.md"
        got = _read(workspace, path, MAX_SKILL_BYTES)
        if got is None:
            continue
        data = got[0]
        key = f"{path}:{hashlib.sha256(data).hexdigest()[:16]}"
        meta = front_matter(data.decode("utf-8", errors="replace"))
        if isinstance(meta, str):
            problems.append((key, f"{path}: {meta}"))
            continue
        skill_name = meta.get("name") or name
        description = meta.get("description", "")
        if not SKILL_NAME.match(skill_name):
            problems.append((key, f"{path}: the name {skill_name[:80]!r} is not a skill name"))
        elif not description:
            problems.append((key, f"{path}: no description in its front matter"))
        elif any(s.name == skill_name for s in skills):
            problems.append((key, f"{path}: another skill is named {skill_name!r} (the first "
                             "is listed)"))
        else:
            skills.append(Skill(skill_name, description[:MAX_DESCRIPTION], path))
    return skills, problems


def project(workspace: Workspace, instructions: bool, files: list[str],
            page_skills: list[Skill]) -> Project:
    """This run's project section of the system prompt."""
    lines: list[str] = []
    blocks: list[str] = []
    if instructions:
        loaded = []
        for path in ["AGENTS.md", *files]:
            got = _read(workspace, path, MAX_INSTRUCTIONS_BYTES)
            if got is None:
                continue
            data, size = got
            if size > MAX_INSTRUCTIONS_BYTES:
                data = _whole_characters(data)
            text = data.decode("utf-8", errors="replace").strip()
            if size > MAX_INSTRUCTIONS_BYTES:
                text += (f"\n[{path} truncated: {MAX_INSTRUCTIONS_BYTES:,} of {size:,} bytes "
                         "shown; read the file for the rest]")
            loaded.append(f"{path} ({size:,} bytes)")
            blocks.append(f"Project instructions ({path}):\n{text}")
        lines.append("- Project instructions: " + (", ".join(loaded) + ", below." if loaded
                                                    else "none (no AGENTS.md in /work)."))
    skills, problems = workspace_skills(workspace)
    # The page's word outranks the workspace's: a workspace skill named like a page's is
    # left out (the model could write one to replace what the page told it), with a note.
    page_names = {s.name for s in page_skills}
    for s in skills:
        if s.name in page_names:
            problems.append((f"{s.path}:page:{s.name}",
                             f"{s.path}: the page gives a skill named {s.name!r}, which is the "
                             "one listed; rename this one to list it too"))
    skills = [s for s in skills if s.name not in page_names] + page_skills
    if skills:
        lines.append(f"- Skills: {len(skills)}, listed below by name and description; "
                     "when one applies, read its instructions first.")
        listed = []
        for s in skills[:MAX_SKILLS]:
            where = f"read {s.path}" if s.path else f"call the skill tool with name {s.name!r}"
            listed.append(f"- {s.name}: {s.description} ({where})")
        blocks.append("Skills:\n" + "\n".join(listed))
    else:
        lines.append("- Skills: none.")
    if problems:
        blocks.append("Skipped skills (each says why; front matter is --- / name: / "
                      "description: / ---):\n" + "\n".join(f"- {m}" for _, m in problems))
    section = "\n".join(lines) + ("\n\n" + "\n\n".join(blocks) if blocks else "")
    return Project(section, problems)
