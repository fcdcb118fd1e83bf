"""`datasets.replace`: a file put in place of another by exchanging their names."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from pathlib import Path

import pytest

from agenteval.datasets import replace as replace_module
from agenteval.datasets.replace import replace
from agenteval.datasets.targets import TargetWriter

linux = pytest.mark.skipif(sys.platform != "linux", reason="the exchange is Linux's renameat2")


def _freed() -> None:
    """Waits for the threads that close replaced files' descriptors."""
    for t in threading.enumerate():
        if t.name == "agenteval-free":
            t.join()


def _open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


def _no_os_replace(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(*args: object) -> None:
        raise AssertionError("os.replace over an existing file")
    monkeypatch.setattr(replace_module.os, "replace", refused)


@linux
def test_an_existing_file_is_exchanged_not_renamed_over(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    old, new = tmp_path / "out.json", tmp_path / ".out.json.tmp"
    old.write_bytes(b"old")
    new.write_bytes(b"new")
    keep = tmp_path / "link"
    os.link(old, keep)  # another name of the old file: it must keep the old bytes
    before = _open_fds()
    _no_os_replace(monkeypatch)
    replace(new, old)
    _freed()
    assert old.read_bytes() == b"new"
    assert keep.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link", "out.json"]
    assert _open_fds() <= before  # the old file's descriptor was closed


@linux
def test_the_old_file_is_freed_when_nothing_else_names_it(tmp_path: Path) -> None:
    old, new = tmp_path / "out.json", tmp_path / "tmp"
    old.write_bytes(b"o" * 100_000)
    new.write_bytes(b"n")
    inode = old.stat().st_ino
    replace(new, old)
    _freed()
    assert old.read_bytes() == b"n"
    assert old.stat().st_ino != inode
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]
    held = []
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(FileNotFoundError):  # (the listing's own descriptor)
            held.append(os.readlink(f"/proc/self/fd/{fd}"))
    assert not any("out.json" in h for h in held)


def test_no_file_there_yet_and_a_symbolic_link_are_renamed_over(tmp_path: Path) -> None:
    new, dst = tmp_path / "a", tmp_path / "b"
    new.write_bytes(b"1")
    replace(new, dst)
    assert dst.read_bytes() == b"1" and not new.exists()
    pointed = tmp_path / "pointed"
    pointed.write_bytes(b"2")
    link = tmp_path / "link"
    link.symlink_to(pointed)
    new.write_bytes(b"3")
    replace(new, link)  # as os.replace: the link itself is replaced, what it pointed to stays
    _freed()
    assert not link.is_symlink() and link.read_bytes() == b"3"
    assert pointed.read_bytes() == b"2"


@linux
def test_a_result_document_committed_over_an_old_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "result.json"
    target.write_bytes(b"old document")
    os.chmod(target, 0o600)
    writer = TargetWriter(target)
    writer.write(b"new ")
    writer.write(b"document")
    _no_os_replace(monkeypatch)
    writer.commit()
    _freed()
    assert target.read_bytes() == b"new document"
    assert [p.name for p in tmp_path.iterdir()] == ["result.json"]
    umask = os.umask(0)
    os.umask(umask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~umask  # an ordinary write's, as before


def test_without_renameat2_the_file_is_renamed_over(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ctypes", None)  # a Python built without ctypes
    assert replace_module._renameat2.__wrapped__() is None
    monkeypatch.setattr(replace_module, "_renameat2", lambda: None)
    old, new = tmp_path / "out.json", tmp_path / "tmp"
    old.write_bytes(b"old")
    new.write_bytes(b"new")
    replace(new, old)
    assert old.read_bytes() == b"new" and [p.name for p in tmp_path.iterdir()] == ["out.json"]
