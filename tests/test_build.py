"""The bundle build fails loudly on a missing or mismatched wheel (no network needed)."""

import pytest

from harness.build.wheels import WHEELS, BuildError, fetch_wheels


def test_missing_wheel_names_the_file_and_fix(tmp_path):
    with pytest.raises(BuildError) as info:
        fetch_wheels(tmp_path, offline=True)
    assert WHEELS[0].file_name in str(info.value)
    assert "sha256" in str(info.value)


def test_mismatched_wheel_fails(tmp_path):
    for wheel in WHEELS:
        (tmp_path / wheel.file_name).write_bytes(b"not the pinned wheel")
    with pytest.raises(BuildError) as info:
        fetch_wheels(tmp_path, offline=True)
    assert "expected" in str(info.value) and "delete it" in str(info.value)


def test_pins_are_consistent():
    names = {w.name for w in WHEELS}
    for wheel in WHEELS:
        assert set(wheel.depends) <= names, wheel.name
        assert len(wheel.sha256) == 64
        assert wheel.file_name.startswith(wheel.name.replace("-", "_") + "-" + wheel.version)
