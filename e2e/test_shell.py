"""The shell tool in real Chromium: just-bash and python3 in the sandbox over a copy of
/work that comes back through the jail, limits, cancel. The page side of each row is an
export of e2e/pages/rows/shell.mjs."""

import pytest

from e2e.conftest import call

SCRIPT = """\
import sys
data = sys.stdin.read().strip()
with open("out/result.txt", "w") as f:
    f.write(f"args={sys.argv[1:]} stdin={data} sum={sum(range(10))}\\n")
print("python wrote out/result.txt")
"""

CALLS = [
    ("write", {"path": "notes.txt", "content": "apple\nbanana\napple pie\ncherry\n"}),
    ("bash", {"command": "cat notes.txt && grep -c apple notes.txt seed.json | sort"}),
    ("bash", {"command": "echo from-shell > made.txt && mkdir -p out && pwd"}),
    ("read", {"path": "made.txt"}),
    ("bash", {"command": "jq '.items | map(.n) | add' seed.json"}),
    ("bash", {"command": "curl http://example.com"}),
    ("bash", {"command": "while true; do :; done"}),
    ("bash", {"command": "sleep 5"}),
    ("bash", {"command": "python3 -c 'for i in range(1, 150001): print(i)' | tee big.txt"}),
    ("bash", {"command": "wc -c big.txt"}),
    ("write", {"path": "script.py", "content": SCRIPT}),
    ("bash", {"command": "echo hello-stdin | python3 script.py one two"}),
    ("bash", {"command": "python3 -c 'import sys; sys.exit(3)'"}),
    ("bash", {"command": "python3 -c 'raise ValueError(\"boom\")'"}),
    ("bash", {"command": "python3 -c 'while True: pass'"}),
    ("bash", {"command": "ln -s /etc/passwd link"}),
    ("bash", {"command": "cat /etc/passwd"}),
    ("bash", {"command": "ls /"}),
    ("bash", {"command": "cd / && ls && ls /etc"}),
    ("bash", {"command": "echo tmp-ok > /tmp/t && cat /tmp/t && ls /tmp"}),
]


def run_shell_turn(app, shell_option):
    turns = [{"toolCalls": [{"name": n, "arguments": a} for n, a in CALLS]}, {"text": "done"}]
    return call(app, "shell.shellTurn", turns, shell_option)


# Alone: its commands share a 1500 ms budget (150,000 lines from python3 must fit).
@pytest.mark.serial
def test_shell_turn_over_the_shared_files(app):
    r = run_shell_turn(app, {"timeoutMs": 1500})
    assert "shell" not in r["steps"]  # the sandbox starts after ready, off the boot path
    assert r["containment"]["sandbox"] == "ready" and r["containment"]["opaqueOrigin"]
    out = {i: (e["output"], e["isError"]) for i, e in enumerate(r["ends"])}
    assert len(out) == len(CALLS)
    cat, err = out[1]
    assert not err and cat.startswith("apple\nbanana\napple pie\ncherry")
    assert "notes.txt:2" in cat and "seed.json:0" in cat
    assert out[2] == ("/work", False)
    assert out[3][0].startswith("from-shell")
    assert out[4] == ("42", False)
    assert out[5][1] and "command not found" in out[5][0] and "[exit 127]" in out[5][0]
    assert out[6][1] and "[exit 126]" in out[6][0]
    assert out[7][1] and "[exit 124]" in out[7][0] and "timed out after 1500 ms" in out[7][0]
    clipped, err = out[8]
    assert not err and "characters cut" in clipped and clipped.startswith("1\n2\n3\n")
    assert clipped.endswith("149999\n150000") and len(clipped) < 21_000
    full = sum(len(f"{n}\n") for n in range(1, 150001))  # 938895 bytes
    assert out[9] == (f"{full} big.txt", False)
    assert out[11] == ("python wrote out/result.txt", False)
    assert r["result"] == "args=['one', 'two'] stdin=hello-stdin sum=45\n"
    assert out[12] == ("[exit 3]", True)
    assert out[13][1] and "ValueError: boom" in out[13][0] and "Traceback" in out[13][0]
    assert "harness" not in out[13][0]  # the traceback shows the script, not our runner
    assert out[14][1] and "[exit 124]" in out[14][0]
    assert out[15][1] and "permission denied" in out[15][0].lower()
    assert out[16][1] and "No such file or directory" in out[16][0]
    assert out[17] == ("tmp\nwork", False)
    assert out[18][1] and out[18][0].startswith("tmp\nwork") and "/etc" in out[18][0]
    assert out[19] == ("tmp-ok\nt", False)
    assert r["done"]["stopReason"] == "stop"
    bash = [t for t in r["tools"] if t["name"] == "bash"]
    assert len(bash) == 1
    assert bash[0]["parameters"]["required"] == ["command"]
    assert "1500 ms" in bash[0]["description"]
    assert list(bash[0]["parameters"]["properties"]) == ["command"]


def test_shell_off_never_downloads_the_shell(app):
    r = call(app, "shell.shellOff")
    assert "bash" not in r["tools"]
    assert r["ends"][0]["isError"] and "Unknown tool 'bash'" in r["ends"][0]["output"]
    assert not any(u.endswith("/sandbox.mjs") for u in app.requests)
    assert r["containment"]["sandbox"] == "off"


def test_shell_renamed_and_cancelled(app):
    r = call(app, "shell.renamedAndCancelled")
    assert r["first"]["stopReason"] == "aborted"
    assert (r["second"]["text"], r["second"]["stopReason"]) == ("after", "stop")
    assert "sh" in r["names"] and "bash" not in r["names"]


def test_model_request_lists_exactly_one_bash(app, provider):
    provider.script([{"toolCalls": [["bash", {"command": "echo $((6 * 7)) | tee n.txt"}]]},
                     {"text": "42 it is"}])
    model = {"api": "openai-chat", "baseUrl": provider.base_url, "model": "m"}
    r = call(app, "shell.promptWithTheShell", model)
    assert r["done"]["text"] == "42 it is" and r["n"] == "42\n"
    first, second = [q for q in provider.requests if q.method == "POST"]
    bash = [t["function"] for t in first.body["tools"] if t["function"]["name"] == "bash"]
    assert len(bash) == 1
    assert bash[0]["parameters"]["required"] == ["command"]
    assert list(bash[0]["parameters"]["properties"]) == ["command"]
    assert "python3" in bash[0]["description"] and "no network" in bash[0]["description"]
    system = first.body["messages"][0]["content"]
    assert "python3 is real CPython 3.14" in system and "jq" in system
    assert second.body["messages"][-1] == {"role": "tool", "tool_call_id": second.body[
        "messages"][-2]["tool_calls"][0]["id"], "content": "42"}


def test_max_output_bytes_bounds_output_and_files(app):
    r = call(app, "shell.maxOutputBytes")
    output, to_file, small = r["ends"]
    assert output["isError"] and "[exit 126]" in output["output"]
    assert "output size exceeded (>4096 bytes)" in output["output"]
    assert to_file["isError"] and "no space left on device" in to_file["output"]
    assert "maxOutputBytes" in to_file["output"]
    assert r["copy"]["code"] == "ENOENT"  # nothing half-written
    assert small["output"] == "small" and not small["isError"]


def test_dev_null_and_python_file_writes_within_the_budget(app):
    r = call(app, "shell.devNullAndPythonWrites")
    null, big, fits = r["ends"]
    assert null["output"] == "visible\n0" and not null["isError"]
    assert "ENOSPC" in big["output"] and "maxOutputBytes" in big["output"]
    assert r["big"]["code"] == "ENOENT" and r["kept"]["code"] == "ENOENT"  # all or nothing
    assert not fits["isError"] and r["fits"]["value"]["size"] == 1000
