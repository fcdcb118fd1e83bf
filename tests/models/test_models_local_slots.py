"""The embedded engine's slot table: slots chosen by the prefix they hold, a cold prefix
evaluated once while its other callers wait, evaluated prefixes saved to disk and restored
into a fresh process's slots. The engine's slot actions are played by a fake that keeps
files as llama.cpp does (the real round trip is measured in bench/bench_judge_speed.py)."""

import threading
import time
from pathlib import Path
from typing import Any

from agenteval.models.local_slots import SAVE_MIN_TOKENS, SlotTable, prefix_key


class FakeSlots:
    """Slot save/restore as llama.cpp's HTTP API does them: files in `directory`."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.actions: list[tuple[str, str]] = []

    def __call__(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        action = path.split("action=")[1]
        self.actions.append((action, body["filename"]))
        file = self.directory / body["filename"]
        if action == "save":
            file.write_bytes(b"kv")
            return {"n_saved": 10}
        return {"n_restored": 10} if file.is_file() else {}


def _body(prefix: str, question: str) -> dict[str, Any]:
    return {"messages": [{"role": "system", "content": prefix}, {"role": "user", "content": question}]}


def test_the_prefix_key_is_every_message_but_the_last() -> None:
    assert prefix_key(_body("p", "q1"), "m") == prefix_key(_body("p", "q2"), "m")
    assert prefix_key(_body("p", "q1"), "m") != prefix_key(_body("other", "q1"), "m")
    assert prefix_key(_body("p", "q1"), "m") != prefix_key(_body("p", "q1"), "another model")
    assert prefix_key({"messages": [{"role": "user", "content": "q"}]}, "m") is None


def test_a_free_slot_holding_the_prefix_is_chosen(tmp_path: Path) -> None:
    table = SlotTable(3, tmp_path, FakeSlots(tmp_path), "m")
    a, b = prefix_key(_body("a", "q"), "m"), prefix_key(_body("b", "q"), "m")
    slot_a, _ = table.acquire(a)
    table.release(slot_a, a, True, 10)
    slot_b, _ = table.acquire(b)
    assert slot_b != slot_a  # an empty slot before one holding another prefix
    table.release(slot_b, b, True, 10)
    assert table.acquire(a)[0] == slot_a and table.acquire(b)[0] == slot_b


def test_an_evaluated_prefix_is_saved_once_and_restored_in_a_fresh_table(tmp_path: Path) -> None:
    fake = FakeSlots(tmp_path)
    key = prefix_key(_body("examples", "q1"), "m")
    first = SlotTable(2, tmp_path, fake, "m")
    slot, warming = first.acquire(key)
    assert warming
    first.prepare(slot, key)
    first.release(slot, key, warming, SAVE_MIN_TOKENS + 100)
    assert [a for a, _ in fake.actions] == ["save"] and (tmp_path / f"{key}.bin").is_file()
    assert not list(tmp_path.glob("*.part"))  # written under another name, then renamed
    slot, warming = first.acquire(key)
    first.release(slot, key, warming, 0)
    assert len(fake.actions) == 1  # held by its slot: nothing restored, nothing saved again
    fresh = SlotTable(2, tmp_path, fake, "m")  # another process
    slot, warming = fresh.acquire(key)
    assert not warming  # on disk: not cold
    fresh.prepare(slot, key)
    assert fake.actions[-1] == ("restore", f"{key}.bin") and fresh.restored == 1


def test_a_short_prefix_is_not_saved_and_no_directory_means_no_files(tmp_path: Path) -> None:
    fake = FakeSlots(tmp_path)
    table = SlotTable(1, tmp_path, fake, "m")
    key = prefix_key(_body("short", "q"), "m")
    slot, warming = table.acquire(key)
    table.release(slot, key, warming, SAVE_MIN_TOKENS - 1)
    assert fake.actions == []
    plain = SlotTable(1, None, None, "m")
    slot, warming = plain.acquire(key)
    plain.prepare(slot, key)
    plain.release(slot, key, warming, 5000)
    assert not list(tmp_path.iterdir())


def test_callers_of_a_cold_prefix_wait_for_its_first_call(tmp_path: Path) -> None:
    fake = FakeSlots(tmp_path)
    table = SlotTable(4, tmp_path, fake, "m")
    key = prefix_key(_body("examples", "q"), "m")
    order: list[str] = []
    slot, warming = table.acquire(key)
    assert warming

    def waiter() -> None:
        s, w = table.acquire(key)
        order.append(f"got a slot, warming={w}")
        table.prepare(s, key)
        time.sleep(0.1)  # both waiters busy at once: one in the first's slot, one restored
        table.release(s, key, w, 0)

    threads = [threading.Thread(target=waiter) for _ in range(2)]
    for t in threads:
        t.start()
    time.sleep(0.2)
    order.append("first done")
    table.release(slot, key, warming, SAVE_MIN_TOKENS)
    for t in threads:
        t.join(5)
    assert order == ["first done", "got a slot, warming=False", "got a slot, warming=False"]
    assert [a for a, _ in fake.actions] == ["save", "restore"]  # the other starts from the file


def test_slots_are_never_shared_and_callers_wait_for_a_free_one(tmp_path: Path) -> None:
    table = SlotTable(2, None, None, "m")
    in_use: set[int] = set()
    clash: list[int] = []
    lock = threading.Lock()

    def call(i: int) -> None:
        slot, warming = table.acquire(f"k{i % 3}")
        with lock:
            if slot in in_use:
                clash.append(slot)
            in_use.add(slot)
        time.sleep(0.01)
        with lock:
            in_use.discard(slot)
        table.release(slot, f"k{i % 3}", warming, 0)

    threads = [threading.Thread(target=call, args=(i,)) for i in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert clash == [] and not any(t.is_alive() for t in threads)


def test_only_the_most_recent_files_are_kept(tmp_path: Path) -> None:
    fake = FakeSlots(tmp_path)
    table = SlotTable(1, tmp_path, fake, "m", max_files=2)
    for i in range(4):
        key = prefix_key(_body(f"prefix {i}", "q"), "m")
        slot, warming = table.acquire(key)
        table.release(slot, key, warming, SAVE_MIN_TOKENS)
        time.sleep(0.02)
    assert len(list(tmp_path.glob("*.bin"))) == 2
