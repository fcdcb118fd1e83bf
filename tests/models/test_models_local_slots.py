"""The embedded engine's slot table: slots chosen by the prefix they hold, a cold prefix
evaluated once while its other callers wait, evaluated prefixes saved to disk and restored
into a fresh process's slots. The engine's slot actions are played by a fake that keeps
files as llama.cpp does (the real round trip is measured in bench/bench_judge_speed.py)."""

import os
import threading
import time
from pathlib import Path
from typing import Any

from agenteval.models.local_slots import (
    HEAD_MIN_TOKENS,
    SAVE_MIN_TOKENS,
    SlotTable,
    begun,
    message_chain,
    message_texts,
    prefix_key,
)


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


# A hallucination question's context: long enough that a call queues behind the slot holding it.
CONTEXT = "The order 7731 was shipped on 3 May by DHL, tracking number 00341; " * 3

def _body(prefix: str, question: str) -> dict[str, Any]:
    return {"messages": [{"role": "system", "content": prefix}, {"role": "user", "content": question}]}


def _examples(prefix: str, question: str) -> dict[str, Any]:
    """A prefix of several messages (a system prompt and a solved example): not a head."""
    return {"messages": [{"role": "system", "content": prefix}, {"role": "user", "content": "2+2?"},
                         {"role": "assistant", "content": "4"}, {"role": "user", "content": question}]}


def _call(table: SlotTable, body: dict[str, Any], evaluated: int) -> int:
    """One call through the table, as LocalModel._call makes it, from the task that asked the
    call before (one thread: one after another); returns its slot."""
    chain = message_chain(body, "m")
    key = chain[-2] if len(chain) >= 2 else None
    slot, warming = table.acquire(key, chain, message_texts(body), threading.get_ident(),
                                  fixed=begun(body))
    table.prepare(slot, key)
    table.release(slot, key, warming, evaluated, chain, message_texts(body), fixed=begun(body))
    return slot


def test_the_prefix_key_is_every_message_but_the_last() -> None:
    assert prefix_key(_body("p", "q1"), "m") == prefix_key(_body("p", "q2"), "m")
    assert prefix_key(_body("p", "q1"), "m") != prefix_key(_body("other", "q1"), "m")
    assert prefix_key(_body("p", "q1"), "m") != prefix_key(_body("p", "q1"), "another model")
    assert prefix_key({"messages": [{"role": "user", "content": "q"}]}, "m") is None
    assert message_chain(_body("p", "q1"), "m")[0] == message_chain(_body("p", "q2"), "m")[0]


def _prefilled(prefix: str, question: str) -> dict[str, Any]:
    """A judge's call on the embedded engine: its reply's JSON head begun in the prompt."""
    body = _body(prefix, question)
    return {"messages": [*body["messages"], {"role": "assistant", "content": '{"verdict": "'}]}


def test_a_reply_begun_in_the_prompt_is_not_part_of_the_prefix(tmp_path: Path) -> None:
    key = prefix_key(_body("examples", "q1"), "m")
    assert prefix_key(_prefilled("examples", "q1"), "m") == key
    assert prefix_key(_prefilled("examples", "q2"), "m") == key
    assert message_texts(_prefilled("examples", "q1"))[-1] == ("user", "q1")
    agent_turn = {"messages": [{"role": "assistant", "content": "hello"}]}  # nothing before it: kept
    assert len(message_chain(agent_turn, "m")) == 1
    # So the examples two questions share are saved, and a fresh process's empty slot restores
    # them instead of evaluating the whole prompt.
    fake = FakeSlots(tmp_path)
    first = SlotTable(2, tmp_path, fake, "m")
    _call(first, _prefilled("examples", "q1"), SAVE_MIN_TOKENS + 100)
    _call(first, _prefilled("examples", "q2"), 5)
    assert fake.actions == [("save", fake.actions[0][1])] and (tmp_path / f"{key}.bin").is_file()
    fresh = SlotTable(2, tmp_path, fake, "m")
    assert _call(fresh, _prefilled("examples", "q3"), 5) in (0, 1)
    assert fake.actions[-1] == ("restore", f"{key}.bin") and fresh.restored == 1


def test_a_judges_question_saves_its_long_prefix_when_first_evaluated(tmp_path: Path) -> None:
    # A run that asks a criterion once (one case, one invocation) would otherwise evaluate its
    # system prompt and examples cold in every process; an agent's step is still not saved.
    fake = FakeSlots(tmp_path)
    table = SlotTable(2, tmp_path, fake, "m")
    assert begun(_prefilled("examples", "q1")) and not begun(_body("examples", "q1"))
    _call(table, _examples("agent's own conversation", "step"), SAVE_MIN_TOKENS + 100)
    assert fake.actions == []
    _call(table, _prefilled("examples", "q1"), SAVE_MIN_TOKENS - 1)  # short: not worth a file
    assert fake.actions == []
    _call(table, _prefilled("criterion", "q1"), SAVE_MIN_TOKENS + 100)
    key = prefix_key(_prefilled("criterion", "q1"), "m")
    assert [a for a, _ in fake.actions] == ["save"] and (tmp_path / f"{key}.bin").is_file()
    fresh = SlotTable(2, tmp_path, fake, "m")  # the next process restores it
    _call(fresh, _prefilled("criterion", "q2"), 5)
    assert fake.actions[-1] == ("restore", f"{key}.bin") and fresh.restored == 1


TOOLS = [{"type": "function", "function": {"name": "roll_die", "parameters": {}}}]


def _agent(step: dict[str, Any], tools: list[dict[str, Any]] = TOOLS) -> dict[str, Any]:
    return {**step, "tools": tools}


def test_an_agents_head_is_saved_when_first_evaluated_and_restored_in_a_fresh_table(tmp_path: Path) -> None:
    # The README's one-case run asks its agent's head (system message and tools) once: before,
    # no file, and every process evaluated it cold.
    fake = FakeSlots(tmp_path)
    table = SlotTable(2, tmp_path, fake, "m")
    first = _agent(_body("instruction and tool catalogue", "What can you do?"))
    key = prefix_key(first, "m")
    assert key != prefix_key(_body("instruction and tool catalogue", "What can you do?"), "m")
    assert key != prefix_key(_agent(_body("instruction and tool catalogue", "q"), []), "m")
    _call(table, first, HEAD_MIN_TOKENS)
    assert fake.actions == [("save", fake.actions[0][1])]
    assert [p.name for p in tmp_path.glob("*.bin")] == [f"head-{key}.bin"]
    # A later step's prefix (the conversation so far) is the agent's own: not saved.
    _call(table, _agent(_examples("instruction and tool catalogue", "roll")), SAVE_MIN_TOKENS + 100)
    assert len(fake.actions) == 1
    fresh = SlotTable(2, tmp_path, fake, "m")  # the next process
    _call(fresh, _agent(_body("instruction and tool catalogue", "Roll a die")), 5)
    assert fake.actions[-1] == ("restore", f"head-{key}.bin") and fresh.restored == 1
    # A head too short to matter, and a judge's question (its own rule), are not saved as heads.
    _call(fresh, _agent(_body("short", "q")), HEAD_MIN_TOKENS - 1)
    _call(fresh, _prefilled("examples", "q1"), SAVE_MIN_TOKENS - 1)
    assert len(fake.actions) == 2


def test_head_files_are_kept_apart_from_a_judges(tmp_path: Path) -> None:
    # Many scenarios, each with its own simulator head, never evict a criterion's file.
    fake = FakeSlots(tmp_path)
    table = SlotTable(1, tmp_path, fake, "m", max_files=2)
    _call(table, _prefilled("criterion", "q1"), SAVE_MIN_TOKENS)
    for i, plan in enumerate(("plan 1", "plan 2", "plan 3")):
        _call(table, _body(plan, "Conversation so far: (nothing yet)"), HEAD_MIN_TOKENS)
        file = tmp_path / f"head-{prefix_key(_body(plan, 'x'), 'm')}.bin"
        os.utime(file, (1_000 + i, 1_000 + i))  # apart, whatever the clock's resolution
    judge = tmp_path / f"{prefix_key(_prefilled('criterion', 'q1'), 'm')}.bin"
    heads = sorted(p.name for p in tmp_path.glob("head-*.bin"))
    assert judge.is_file() and len(heads) == 2
    assert f"head-{prefix_key(_body('plan 1', 'x'), 'm')}.bin" not in heads  # least recently used


def test_a_free_slot_holding_the_conversation_is_chosen(tmp_path: Path) -> None:
    table = SlotTable(3, tmp_path, FakeSlots(tmp_path), "m")
    slot_a = _call(table, _body("a", "q"), 10)
    slot_b = _call(table, _body("b", "q"), 10)
    assert slot_b != slot_a  # an empty slot before one holding another prefix
    assert _call(table, _body("a", "q2"), 10) == slot_a and _call(table, _body("b", "q2"), 10) == slot_b
    # An agent's next step (its conversation so far, one message more) goes back to its slot.
    step = {"messages": [*_body("b", "q2")["messages"], {"role": "assistant", "content": "x"},
                         {"role": "user", "content": "y"}]}
    assert _call(table, step, 10) == slot_b


def test_a_shared_prefix_is_saved_once_and_restored_in_a_fresh_table(tmp_path: Path) -> None:
    fake = FakeSlots(tmp_path)
    key = prefix_key(_examples("examples", "q1"), "m")
    first = SlotTable(2, tmp_path, fake, "m")
    _call(first, _examples("examples", "q1"), SAVE_MIN_TOKENS + 100)
    assert fake.actions == []  # asked for once: maybe one agent step, not saved
    _call(first, _examples("examples", "q2"), 5)  # asked again: a shared prefix, saved
    assert [a for a, _ in fake.actions] == ["save"] and (tmp_path / f"{key}.bin").is_file()
    assert not list(tmp_path.glob("*.part"))  # written under another name, then renamed
    _call(first, _examples("examples", "q3"), 5)
    assert len(fake.actions) == 1  # held by its slot: nothing restored, nothing saved again
    fresh = SlotTable(2, tmp_path, fake, "m")  # another process
    chain = message_chain(_examples("examples", "q4"), "m")
    slot, warming = fresh.acquire(key, chain)
    assert not warming  # on disk: not cold
    fresh.prepare(slot, key)
    assert fake.actions[-1] == ("restore", f"{key}.bin") and fresh.restored == 1


def test_a_short_prefix_is_not_saved_and_no_directory_means_no_files(tmp_path: Path) -> None:
    fake = FakeSlots(tmp_path)
    table = SlotTable(1, tmp_path, fake, "m")
    for q in ("q1", "q2", "q3"):
        _call(table, _examples("short", q), SAVE_MIN_TOKENS - 1)
    assert fake.actions == []
    plain = SlotTable(1, None, None, "m")
    for q in ("q1", "q2"):
        _call(plain, _examples("long", q), 5000)
    assert not list(tmp_path.iterdir())


def test_callers_of_a_cold_prefix_wait_for_its_first_call(tmp_path: Path) -> None:
    fake = FakeSlots(tmp_path)
    table = SlotTable(4, tmp_path, fake, "m")
    body = _body("examples", "q")
    chain = message_chain(body, "m")
    key = chain[-2]
    order: list[str] = []
    slot, warming = table.acquire(key, chain)
    assert warming

    def waiter() -> None:
        s, w = table.acquire(key, chain)
        order.append(f"got a slot, warming={w}")
        table.prepare(s, key)
        time.sleep(0.1)
        table.release(s, key, w, 0, chain)

    threads = [threading.Thread(target=waiter) for _ in range(2)]
    for t in threads:
        t.start()
    time.sleep(0.2)
    order.append("first done")
    table.release(slot, key, warming, SAVE_MIN_TOKENS, chain)
    for t in threads:
        t.join(5)
    assert order == ["first done", "got a slot, warming=False", "got a slot, warming=False"]
    # Three calls wanted it: saved when the first is done; one waiter runs in the first's
    # slot, the other in a slot of its own, restored from the file.
    assert [a for a, _ in fake.actions] == ["save", "restore"]


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


def test_a_long_prefix_held_only_by_a_busy_slot_is_waited_for_not_evaluated_again(tmp_path: Path) -> None:
    fake = FakeSlots(tmp_path)
    table = SlotTable(3, tmp_path, fake, "m")
    key = prefix_key(_examples("examples", "q1"), "m")
    holder = _call(table, _examples("examples", "q1"), SAVE_MIN_TOKENS + 100)  # alone: not saved
    second = _examples("examples", "q2")
    chain = message_chain(second, "m")
    slot, warming = table.acquire(key, chain, message_texts(second))
    assert slot == holder and not warming and fake.actions == []
    got: list[int] = []

    def third() -> None:
        body = _examples("examples", "q3")
        s, w = table.acquire(key, message_chain(body, "m"), message_texts(body))
        got.append(s)
        table.prepare(s, key)
        table.release(s, key, w, 5, message_chain(body, "m"), message_texts(body))

    thread = threading.Thread(target=third)
    thread.start()
    time.sleep(0.2)
    assert got == []  # two slots are empty, yet it waits for the one holding its prefix
    table.release(slot, key, warming, 5, chain, message_texts(second))
    thread.join(5)
    assert (tmp_path / f"{key}.bin").is_file()  # asked for again: saved by the holder's release
    assert got == [holder] and [a for a, _ in fake.actions] == ["save"]
    # Once on disk, concurrent callers restore it into empty slots instead of waiting.
    busy, w = table.acquire(key, message_chain(_examples("examples", "q4"), "m"))
    other = _call(table, _examples("examples", "q5"), 5)
    assert other != busy and fake.actions[-1] == ("restore", f"{key}.bin")
    table.release(busy, key, w, 5, message_chain(_examples("examples", "q4"), "m"))


def test_without_files_a_busy_holder_is_not_waited_for() -> None:
    table = SlotTable(2, None, None, "m")
    key = prefix_key(_body("examples", "q1"), "m")
    holder = _call(table, _body("examples", "q1"), SAVE_MIN_TOKENS + 100)
    busy, w = table.acquire(key, message_chain(_body("examples", "q2"), "m"))
    assert busy == holder
    assert _call(table, _body("examples", "q3"), 5) != holder  # each slot evaluates it once
    table.release(busy, key, w, 5, message_chain(_body("examples", "q2"), "m"))


def test_only_the_most_recent_files_are_kept(tmp_path: Path) -> None:
    fake = FakeSlots(tmp_path)
    table = SlotTable(1, tmp_path, fake, "m", max_files=2)
    for i in range(4):
        for q in ("q1", "q2"):
            _call(table, _body(f"prefix {i}", q), SAVE_MIN_TOKENS)
        time.sleep(0.02)
    assert len(list(tmp_path.glob("*.bin"))) == 2


FIXED = "Is every fact in the sentence stated in the context? Answer supported or not. " * 4


def _question(context: str, sentence: str) -> dict[str, Any]:
    """A judge question: shared system prompt, then fixed text, the context, the sentence."""
    return _body("system and examples", f"{FIXED}\nContext: {context}\nSentence: {sentence}")


def _start(table: SlotTable, body: dict[str, Any]) -> tuple[int, tuple[str, ...], Any]:
    chain = message_chain(body, "m")
    slot, warming = table.acquire(chain[-2], chain, message_texts(body))
    return slot, chain, warming


def _end(table: SlotTable, body: dict[str, Any], slot: int, warming: bool) -> None:
    chain = message_chain(body, "m")
    table.release(slot, chain[-2], warming, 0, chain, message_texts(body))


def _in_thread(table: SlotTable, body: dict[str, Any], got: list[int]) -> threading.Thread:
    def run() -> None:
        slot, _, warming = _start(table, body)
        got.append(slot)
        _end(table, body, slot, warming)
    thread = threading.Thread(target=run)
    thread.start()
    return thread


def _warm(table: SlotTable) -> None:
    """Two earlier responses: the table learns that the questions share only the fixed text."""
    for context in ("the weather in Oslo is 3 degrees and raining", "a flight BA117 leaves at 9"):
        body = _question(context + " " * 100, "It is warm.")
        slot, _, warming = _start(table, body)
        _end(table, body, slot, warming)


def test_sentences_sharing_a_context_queue_behind_the_slot_evaluating_it() -> None:
    table = SlotTable(4, None, None, "m")
    _warm(table)
    first = _question(CONTEXT, "It shipped on 3 May.")
    slot, _, warming = _start(table, first)
    got: list[int] = []
    thread = _in_thread(table, _question(CONTEXT, "The carrier was UPS."), got)
    time.sleep(0.2)
    assert got == []  # three slots are free, yet it waits for the one evaluating its context
    _end(table, first, slot, warming)
    thread.join(5)
    assert got == [slot] and table.queued == 1


def test_questions_sharing_only_the_fixed_text_run_side_by_side() -> None:
    table = SlotTable(4, None, None, "m")
    _warm(table)
    first = _question("The order 7731 was shipped on 3 May by DHL. " * 3, "It shipped on 3 May.")
    slot, _, warming = _start(table, first)
    got: list[int] = []
    _in_thread(table, _question("Room 12 is booked for 2 nights at 90 EUR. " * 3, "It costs 90 EUR."),
               got).join(5)
    assert got and got[0] != slot and table.queued == 0  # another case's question: not queued
    _end(table, first, slot, warming)


def test_a_conversations_next_question_reaches_the_slot_holding_it_in_any_order() -> None:
    table = SlotTable(4, None, None, "m")
    conversations = [f"USER 1: conversation {i} " + f"turn text {i} " * 30 for i in range(4)]
    _call(table, _body("judge", "warm"), 10)  # the prefix evaluated: not cold any more
    firsts = {i: _body("judge", f"{conversations[i]}\nDid the agent succeed?") for i in range(4)}
    started = {i: _start(table, firsts[i]) for i in range(4)}  # judged four at once
    slots = {i: started[i][0] for i in range(4)}
    assert len(set(slots.values())) == 4
    for i in (2, 0, 3, 1):
        _end(table, firsts[i], slots[i], started[i][2])
    for i in (0, 1, 2, 3):  # not the least recently used order: the slot holding it wins
        assert _call(table, _body("judge", f"{conversations[i]}\nWere tools used well?"), 10) == slots[i]


def test_agent_conversations_in_flight_never_queue_behind_each_other() -> None:
    table = SlotTable(2, None, None, "m")
    system = "You are a travel agent. " * 20
    steps = [{"messages": [{"role": "system", "content": system},
                           {"role": "user", "content": f"Book trip {i}"},
                           {"role": "assistant", "content": "calling search"},
                           {"role": "user", "content": "tool result: " + "flight list " * 20}]}
             for i in range(2)]
    slot, _, warming = _start(table, steps[0])
    got: list[int] = []
    _in_thread(table, steps[1], got).join(5)
    assert got and got[0] != slot and table.queued == 0
    _end(table, steps[0], slot, warming)


def test_by_text_off_chooses_by_whole_messages_only() -> None:
    table = SlotTable(4, None, None, "m")
    table.by_text = False
    _warm(table)
    first = _question(CONTEXT, "It shipped on 3 May.")
    slot, _, warming = _start(table, first)
    got: list[int] = []
    _in_thread(table, _question(CONTEXT, "The carrier was UPS."), got).join(5)
    assert got and got[0] != slot and table.queued == 0
    _end(table, first, slot, warming)


def _continued(body: dict[str, Any], reply: str) -> dict[str, Any]:
    """The follow-up of a judge's call: the same messages, the reply begun further."""
    return {"messages": [*body["messages"][:-1], {"role": "assistant", "content": reply}]}


def _judge(context: str, sentence: str) -> dict[str, Any]:
    """A judge's question with its reply begun in the prompt (`prefill`)."""
    return {"messages": [*_question(context, sentence)["messages"],
                         {"role": "assistant", "content": '{"verdict": "'}]}


def _begin(table: SlotTable, body: dict[str, Any]) -> tuple[int, bool]:
    chain = message_chain(body, "m")
    return table.acquire(chain[-2], chain, message_texts(body))


def _finish(table: SlotTable, body: dict[str, Any], slot: int, warming: bool) -> None:
    chain = message_chain(body, "m")
    table.release(slot, chain[-2], warming, 0, chain, message_texts(body), fixed=begun(body))


def _judged_in_thread(table: SlotTable, body: dict[str, Any], got: list[tuple[int, float]]
                      ) -> threading.Thread:
    """`body` asked in a thread that records (its slot, when it got it) and keeps the slot until
    the test releases it (`_finish`)."""
    def run() -> None:
        slot, _ = _begin(table, body)
        got.append((slot, time.monotonic()))
    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_a_follow_up_call_gets_its_slot_back_before_a_call_waiting_for_a_free_one() -> None:
    table = SlotTable(2, None, None, "m")
    table.hold = 5.0  # long, so that the test does not depend on the machine's speed
    _warm(table)
    first = _judge("The order 7731 was shipped on 3 May by DHL. " * 3, "It shipped on 3 May.")
    other = _question("Room 12 is booked for 2 nights at 90 EUR. " * 3, "It costs 90 EUR.")  # not begun
    slot, warming = _begin(table, first)
    busy, _ = _begin(table, other)  # both slots busy
    waiting: list[tuple[int, float]] = []
    waiter = _judged_in_thread(table, _judge("A flight BA117 leaves at 9 from LHR. " * 3, "At 9."),
                               waiting)
    time.sleep(0.1)
    assert waiting == []
    _finish(table, first, slot, warming)  # the label: its slot is kept for the rationale
    time.sleep(0.1)  # the waiting call had time to take it, were it free
    follow = _continued(first, '{"verdict": "invalid", "rationale": "')
    got: list[tuple[int, float]] = []
    _judged_in_thread(table, follow, got).join(5)
    assert got and got[0][0] == slot and table.continued == 1 and waiting == []
    _finish(table, follow, slot, False)  # kept again (a rationale has no follow-up): until 5 s
    _finish(table, other, busy, False)  # a call whose reply was not begun: its slot at once
    waiter.join(5)
    assert waiting and waiting[0][0] == busy


def test_a_kept_slot_goes_to_a_waiting_call_when_its_hold_ends() -> None:
    table = SlotTable(1, None, None, "m")
    table.hold = 0.3
    _warm(table)
    first = _judge("The order 7731 was shipped on 3 May by DHL. " * 3, "It shipped on 3 May.")
    slot, warming = _begin(table, first)
    waiting: list[tuple[int, float]] = []
    waiter = _judged_in_thread(table, _judge("Room 12 is booked at 90 EUR. " * 3, "90 EUR."), waiting)
    time.sleep(0.05)
    released = time.monotonic()
    _finish(table, first, slot, warming)  # a passing verdict: no follow-up comes
    waiter.join(10)
    assert waiting and waiting[0][0] == slot
    assert waiting[0][1] - released >= 0.25  # kept for the hold, then handed on (no deadlock)
    assert table.continued == 0


def test_a_call_whose_reply_is_not_begun_keeps_no_slot() -> None:
    table = SlotTable(1, None, None, "m")
    table.hold = 5.0
    step = _body("You are a travel agent.", "Book a trip")  # an agent's step: not a judge's
    slot, warming = _begin(table, _body("You are a travel agent.", "warm"))
    waiting: list[tuple[int, float]] = []
    waiter = _judged_in_thread(table, step, waiting)
    time.sleep(0.05)
    released = time.monotonic()
    _finish(table, _body("You are a travel agent.", "warm"), slot, warming)
    waiter.join(5)
    assert waiting and waiting[0][1] - released < 2.0


def test_sentences_queued_behind_a_context_wait_for_the_first_sentences_follow_up() -> None:
    table = SlotTable(4, None, None, "m")
    table.hold = 5.0
    _warm(table)
    first = _judge(CONTEXT, "It shipped on 3 May.")
    slot, warming = _begin(table, first)
    queued: list[tuple[int, float]] = []
    second = _judge(CONTEXT, "The carrier was UPS.")
    waiter = _judged_in_thread(table, second, queued)  # queued behind the slot holding the context
    time.sleep(0.1)
    _finish(table, first, slot, warming)  # the first note; its next field follows
    time.sleep(0.1)
    follow = _continued(first, '{"sentence_says": "shipped 3 May", "context_says": "')
    got: list[tuple[int, float]] = []
    _judged_in_thread(table, follow, got).join(5)
    assert got and got[0][0] == slot and queued == []
    table.hold = 0.01
    _finish(table, follow, slot, False)
    waiter.join(5)
    assert queued and queued[0][0] == slot and table.queued == 1


def test_a_call_sharing_a_kept_slots_text_queues_behind_it() -> None:
    table = SlotTable(4, None, None, "m")
    table.hold = 0.2
    _warm(table)
    first = _judge(CONTEXT, "It shipped on 3 May.")
    slot, warming = _begin(table, first)
    _finish(table, first, slot, warming)  # kept; three other slots are free
    got: list[tuple[int, float]] = []
    _judged_in_thread(table, _judge(CONTEXT, "The carrier was UPS."), got).join(5)
    assert got and got[0][0] == slot  # the context is not evaluated again in a free slot


def test_the_same_callers_next_question_ends_the_hold_at_once() -> None:
    table = SlotTable(2, None, None, "m")
    table.hold = 5.0
    _warm(table)
    first = _judge("The order 7731 was shipped on 3 May by DHL. " * 3, "It shipped on 3 May.")
    slot, warming = table.acquire(*_args(first), owner="task 1")
    _finish(table, first, slot, warming)  # a passing verdict: kept for a follow-up
    other, _ = table.acquire(*_args(_judge("Room 12 at 90 EUR. " * 3, "90 EUR.")), owner="task 2")
    assert other != slot  # another task's question does not take the kept slot
    started = time.monotonic()
    # The same task asks its next question (about the same response): its follow-up is not
    # coming, so the slot holding the response is its at once, not after the hold.
    again, _ = table.acquire(*_args(_judge("The order 7731 was shipped on 3 May by DHL. " * 3,
                                           "DHL carried it.")), owner="task 1")
    assert again == slot and time.monotonic() - started < 1.0 and table.continued == 0


def _args(body: dict[str, Any]) -> tuple[str, tuple[str, ...], Any]:
    chain = message_chain(body, "m")
    return chain[-2], chain, message_texts(body)
