"""Read before overwrite counts only reads that returned the file's content, in the
current history (issue 28, class 4): a failed read does not count, a rewind forgets
the reads of the runs it removed, and each thread has its own."""

import asyncio
import base64
import json

import pytest

from harness.runtime.native import NativeRuntime
from harness.session import Session
from harness.tools.reads import MAX_SIGHTINGS, Reads

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")


def read(path, **more):
    return {"name": "read", "arguments": {"path": path, **more}}


def write(path, content="the model's\n"):
    return {"name": "write", "arguments": {"path": path, "content": content}}


def session(tmp_path, turns, **options):
    runtime = NativeRuntime(str(tmp_path / "ws"))
    model = {"api": "scripted", "turns": turns, **options.pop("model", {})}
    config = json.dumps({"model": model, **options})
    return Session.from_options(config, runtime), runtime


def prompt(s, run_id):
    async def go():
        return await s.prompt(run_id, "go")

    return asyncio.run(go())


def steps(*calls, closing="done"):
    return [{"toolCalls": [c]} for c in calls] + [{"text": closing}]


def ends(rt):
    return [(m["name"], m["isError"], m["output"]) for m in rt.messages
            if m.get("type") == "tool_end"]


@pytest.fixture
def ws(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("one\ntwo\n")
    return root


FAILED_READS = {
    "offset past the end": read("a.txt", offset=3),
    "far past the end": read("a.txt", offset=10**9),
    "a directory at that path": read("d"),
    "a missing file": read("missing.txt"),
    "outside the jail": read("../ws/a.txt"),
    "a climb back in": read("/work/../work/a.txt/x"),
    "invalid arguments": {"name": "read", "arguments": {"path": "a.txt", "ofset": 1}},
}


@pytest.mark.parametrize("why", FAILED_READS)
def test_a_read_that_failed_does_not_count(tmp_path, ws, why):
    (ws / "d").mkdir()
    s, rt = session(tmp_path, steps(FAILED_READS[why], write("a.txt")))
    prompt(s, "r1")
    (name, failed, _), (_, refused, output) = ends(rt)
    assert name == "read" and failed
    assert refused and "you have not read it" in output
    assert (ws / "a.txt").read_text() == "one\ntwo\n"


def test_a_binary_file_or_an_image_not_shown_does_not_count(tmp_path, ws):
    (ws / "b.bin").write_bytes(b"\x00\x01binary")
    (ws / "p.png").write_bytes(PNG)
    s, rt = session(tmp_path, steps(read("b.bin"), write("b.bin"), read("p.png"),
                                    write("p.png")))
    prompt(s, "r1")
    results = ends(rt)
    assert results[0][1] and results[1][1] and "you have not read it" in results[1][2]
    assert not results[2][1] and "only this description" in results[2][2]
    assert results[3][1] and "you have not read it" in results[3][2]
    assert (ws / "p.png").read_bytes() == PNG


def test_an_image_shown_to_the_model_counts(tmp_path, ws):
    (ws / "p.png").write_bytes(PNG)
    s, rt = session(tmp_path, steps(read("p.png"), write("p.png", "text now\n")),
                    model={"vision": True})
    prompt(s, "r1")
    assert [r[1] for r in ends(rt)] == [False, False]


def test_a_read_a_rule_denied_does_not_count(tmp_path, ws):
    s, rt = session(tmp_path, steps(read("a.txt"), write("a.txt")),
                    permissions={"read": {"*": "allow", "a.txt": "deny"}})
    prompt(s, "r1")
    (_, denied, why), (_, refused, output) = ends(rt)
    assert denied and "denied by the permission rule" in why
    assert refused and "you have not read it" in output


def test_reads_that_returned_content_count_in_part_and_empty(tmp_path, ws):
    (ws / "e.txt").write_text("")
    s, rt = session(tmp_path, steps(read("a.txt", offset=2, limit=1), write("a.txt"),
                                    read("e.txt"), write("e.txt")))
    prompt(s, "r1")
    assert [r[1] for r in ends(rt)] == [False, False, False, False]


def test_a_rewind_forgets_the_reads_of_the_runs_it_removed(tmp_path, ws):
    (ws / "b.txt").write_text("bee\n")
    turns = [*steps(read("b.txt"), closing="r1"), *steps(read("a.txt"), closing="r2"),
             *steps(write("a.txt"), write("b.txt", "b by the model\n"), closing="r3")]
    s, rt = session(tmp_path, turns)
    prompt(s, "r1")
    prompt(s, "r2")
    rewound = json.loads(s.threads(json.dumps({"op": "rewind", "runId": "r2"})))
    assert rewound["ok"] and rewound["value"]["rewound"] == ["r2"]
    prompt(s, "r3")
    (_, refused, output), (_, b_failed, _) = ends(rt)[-2:]
    assert refused and "you have not read it" in output  # r2's read is gone with r2
    assert not b_failed  # r1's read of b.txt is still in the history
    assert (ws / "a.txt").read_text() == "one\ntwo\n"
    assert (ws / "b.txt").read_text() == "b by the model\n"


def test_after_a_rewind_the_newest_read_left_is_what_counts(tmp_path, ws):
    turns = [*steps(read("a.txt"), closing="r1"), *steps(read("a.txt"), closing="r2"),
             *steps(write("a.txt"), closing="r3")]
    s, rt = session(tmp_path, turns)
    prompt(s, "r1")
    s.fs('{"op": "writeFile", "path": "a.txt"}', b"changed by the page\n")
    prompt(s, "r2")  # saw the page's version
    assert json.loads(s.threads('{"op": "rewind", "runId": "r2"}'))["ok"]
    prompt(s, "r3")
    _, refused, output = ends(rt)[-1]
    assert refused and "changed since you last read it" in output
    assert (ws / "a.txt").read_text() == "changed by the page\n"


def test_a_rewind_forgets_the_models_own_writes(tmp_path, ws):
    turns = [*steps(write("new.txt", "v1\n"), closing="r1"),
             *steps(write("new.txt", "v2\n"), closing="r2")]
    s, rt = session(tmp_path, turns, checkpoints=False)
    prompt(s, "r1")
    assert json.loads(s.threads('{"op": "rewind", "runId": "r1"}'))["ok"]
    prompt(s, "r2")  # new.txt is still there (checkpoints off): the model never saw it
    _, refused, output = ends(rt)[-1]
    assert refused and "you have not read it" in output
    assert (ws / "new.txt").read_text() == "v1\n"


def test_a_read_in_another_thread_does_not_count(tmp_path, ws):
    turns = [*steps(read("a.txt"), closing="t1"), *steps(write("a.txt"), closing="t2"),
             *steps(write("a.txt", "in the first thread\n"), closing="t1 again")]
    s, rt = session(tmp_path, turns)
    first = json.loads(s.threads('{"op": "list"}'))["value"]["current"]
    prompt(s, "r1")
    assert json.loads(s.threads('{"op": "create"}'))["ok"]
    prompt(s, "r2")
    _, refused, output = ends(rt)[-1]
    assert refused and "you have not read it" in output
    assert json.loads(s.threads(json.dumps({"op": "switch", "id": first})))["ok"]
    prompt(s, "r3")
    assert not ends(rt)[-1][1]
    assert (ws / "a.txt").read_text() == "in the first thread\n"


def test_sightings_per_file_are_bounded_and_forgetting_is_safe():
    reads = Reads()
    for i in range(MAX_SIGHTINGS * 3):
        reads.run = f"r{i}"
        reads.saw("/work/a", b"same")
    reads.forget(f"r{i}" for i in range(MAX_SIGHTINGS * 3 - 1, MAX_SIGHTINGS * 3))
    reads.check("/work/a", b"same", "write")  # an older sighting is left
    reads.forget(f"r{i}" for i in range(MAX_SIGHTINGS * 3))
    with pytest.raises(Exception, match="not read it"):
        reads.check("/work/a", b"same", "write")
