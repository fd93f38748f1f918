"""Plan mode in real Chromium with the real sandbox: a hostile scripted model tries every
way to change /work during a plan run (write, edit, bash redirects under an allowed
command, python3 writing a file, a command the page did not allow, a page tool that
writes); the tree, hashed from the page, is unchanged; the plan event arrives and the
approved plan is carried out. The page side is e2e/pages/rows/plan.mjs."""

from e2e.conftest import call

COMMANDS = ["ls *", "cat *", "python3 *", "echo *"]
HOSTILE = [
    {"text": "Looking around.", "toolCalls": [
        {"name": "ls", "arguments": {}},
        {"name": "read", "arguments": {"path": "a.txt"}},
        {"name": "lookup", "arguments": {"q": "x"}},
        {"name": "write", "arguments": {"path": "a.txt", "content": "changed\n"}},
        {"name": "edit", "arguments": {"path": "a.txt", "edits": [
            {"oldText": "original", "newText": "changed"}]}},
        {"name": "save_note", "arguments": {"text": "x"}},
        {"name": "bash", "arguments": {"command": "cat a.txt > b.txt; echo made >> a.txt"}},
        {"name": "bash", "arguments": {"command":
                                       "python3 -c \"open('c.txt','w').write('x')\""}},
        {"name": "bash", "arguments": {"command": "rm -rf src; cat a.txt"}},
        {"name": "bash", "arguments": {"command": "ls -la"}},
    ]},
    {"text": "1. Replace a.txt's text with hello.\n2. Check it with cat."},
    # carrying it out
    {"toolCalls": [{"name": "write", "arguments": {"path": "a.txt", "content": "hello\n"}}]},
    {"text": "Done."},
]


def test_a_hostile_plan_run_changes_nothing_and_its_plan_is_carried_out(app):
    r = call(app, "plan.hostilePlan", HOSTILE, COMMANDS)
    assert r["after"] == r["before"] and r["before"]["paths"] == 3
    events = r["planned"]["events"]
    assert events[0]["type"] == "run_start" and events[0]["mode"] == "plan"
    ends = [e for e in events if e["type"] == "tool_end"]
    by = {e["name"]: e for e in ends}
    assert not by["ls"]["isError"] and not by["read"]["isError"] and by["lookup"]["output"] == "found"
    for name in ("write", "edit", "save_note"):
        assert by[name]["isError"] and "this is a plan run" in by[name]["output"], name
    bash = [e["output"] for e in ends if e["name"] == "bash"]
    assert "nothing in /work may change" in bash[0] and "b.txt" in bash[0]
    assert "nothing in /work may change" in bash[1] and "c.txt" in bash[1]
    assert "not run in plan mode" in bash[2]  # rm is not one of plan.commands
    assert "a.txt" in bash[3] and "src" in bash[3]  # an allowed command runs
    assert r["calls"] == ["lookup"]  # the writing page tool never ran
    plan = [e for e in events if e["type"] == "plan"]
    assert plan and plan[0]["text"].startswith("1. Replace a.txt") and events[-2] == plan[0]
    assert r["planned"]["done"]["stopReason"] == "stop"
    # approved: carried out with the normal tools, the plan given with the prompt
    carried = r["carried"]
    assert carried["events"][0]["plan"] == plan[0]["text"]
    assert carried["done"]["stopReason"] == "stop" and r["final"] == "hello\n"
    assert r["bad"] == "EINVAL"
