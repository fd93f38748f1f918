"""The hand-written parser of common h.fs requests (fsops._parse_common) agrees with the
pydantic models on every input: it either returns the same request or leaves the input
to pydantic (which then gives the same request or the same error)."""

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from harness.errors import FsError
from harness.workspace.fsops import _parse_common, _parse_with_models, parse_request

OPS = ["readFile", "writeFile", "stat", "readdir", "mkdir", "rm", "rename", "exportZip",
       "importZip", "nope"]
KEYS = ["op", "path", "append", "recursive", "force", "from", "to", "replace", "extra"]
SCALARS = st.one_of(st.text(max_size=8), st.booleans(), st.integers(), st.none(),
                    st.floats(allow_nan=False), st.sampled_from([*OPS, "a/b", "\ud800x"]))
VALUES = st.one_of(SCALARS, st.lists(SCALARS, max_size=2),
                   st.dictionaries(st.text(max_size=3), SCALARS, max_size=2))
REQUESTS = st.dictionaries(st.sampled_from(KEYS), VALUES, max_size=5)


def pydantic_answer(text):
    """What parse_request answers without the fast path: a request, or a refusal."""
    try:
        return _parse_with_models(text)
    except FsError:
        return "refused"


def same(a, b):
    return type(a) is type(b) and a.model_dump(by_alias=True) == b.model_dump(by_alias=True)


@settings(max_examples=600, deadline=None)
@given(REQUESTS, st.booleans())
def test_fast_path_agrees_with_the_models(request, with_op):
    if with_op and "op" not in request:
        request["op"] = "readFile"
    text = json.dumps(request)
    fast = _parse_common(text)
    if fast is None:
        return  # left to pydantic, which parse_request runs next
    slow = pydantic_answer(text)
    assert slow != "refused", text
    assert same(fast, slow), text
    assert same(parse_request(text), slow)


def test_a_lone_surrogate_escape_in_a_path():
    # JSON.stringify writes one as "\ud800", which pydantic's own parser refuses.
    text = json.dumps({"op": "readFile", "path": "a\ud800"})
    fast = _parse_common(text)
    assert fast is not None and fast.path == "a\ufffd"
    assert same(fast, pydantic_answer(text))


def test_common_requests_take_the_fast_path():
    for request in [{"op": "readFile", "path": "a"}, {"op": "writeFile", "path": "a"},
                    {"op": "writeFile", "path": "a", "append": True},
                    {"op": "rm", "path": "d", "recursive": True, "force": False},
                    {"op": "mkdir", "path": "d", "recursive": True},
                    {"op": "stat", "path": "/work"}, {"op": "readdir", "path": "."}]:
        fast = _parse_common(json.dumps(request))
        assert fast is not None and same(fast, pydantic_answer(json.dumps(request)))


def test_what_the_fast_path_leaves_to_pydantic():
    for text in ['{"op": "readFile", "path": 1}', '{"op": "readFile"}',
                 '{"op": "readFile", "path": "a", "append": true}',
                 '{"op": "writeFile", "path": "a", "append": 1}', '{"op": ["x"], "path": "a"}',
                 '{"op": "rename", "from": "a", "to": "b"}', '[1]', 'not json', '"x"']:
        assert _parse_common(text) is None, text
    try:
        parse_request('{"op": "readFile", "path": 1}')
    except FsError as exc:
        assert exc.code == "EINVAL" and "path" in str(exc)
    else:
        raise AssertionError("a number as path was accepted")


def test_lone_surrogates_and_duplicate_keys_as_before():
    text = '{"op": "readFile", "path": "a\\ud800b"}'
    assert parse_request(text).path == "a\ufffdb"
    text = '{"op": "stat", "op": "readFile", "path": "p"}'
    fast = _parse_common(text)
    assert fast is not None and same(fast, pydantic_answer(text))


def test_readable_path_is_the_jails_answer(tmp_path):
    import os

    from harness.workspace.fsops import readable_path
    from harness.workspace.jail import Workspace

    ws = Workspace(tmp_path / "ws")
    (tmp_path / "ws" / "f").write_text("x")
    (tmp_path / "secret").write_text("s")
    os.symlink(tmp_path, tmp_path / "ws" / "out")
    assert readable_path(ws, "f") == os.path.join(ws.root, "f")
    assert readable_path(ws, "missing") == os.path.join(ws.root, "missing")  # read says ENOENT
    assert readable_path(ws, "out/ws/f") == os.path.join(ws.root, "out/ws/f")  # ends inside
    for refused in ["../f", "/etc/passwd", "out/secret", "a\x00b", 7]:
        assert readable_path(ws, refused) is None


def test_writable_path_is_none_wherever_write_file_would_refuse(tmp_path):
    import os

    from harness.workspace.fsops import writable_path, write_file
    from harness.workspace.jail import Workspace

    ws = Workspace(tmp_path / "ws")
    (tmp_path / "ws" / "dir").mkdir()
    (tmp_path / "ws" / "f").write_text("x")
    os.symlink(tmp_path, tmp_path / "ws" / "out")
    assert writable_path(ws, "f") == os.path.join(ws.root, "f")
    assert writable_path(ws, "dir/new") == os.path.join(ws.root, "dir", "new")
    for refused in ["", "/work", "dir", "missing/new", "f/under", "../f", "/etc/passwd",
                    "out/secret", "a\x00b", 7, "x" * 300]:
        assert writable_path(ws, refused) is None, refused
        if isinstance(refused, str) and refused not in ("/etc/passwd",):
            try:
                write_file(ws, refused, b"y")
            except Exception:
                continue
            raise AssertionError(f"write_file took {refused!r}, writable_path did not")
