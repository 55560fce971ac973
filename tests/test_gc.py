"""Garbage collection deferred while ``import leapgram`` runs; the user's settings left as they were."""

from __future__ import annotations

import gc
import subprocess
import sys
import threading

import pytest

from leapgram._gc import collections_deferred, paused_collections


class Node:
    """A tracked object, so that a cycle of two can be made."""


@pytest.mark.parametrize("enabled", [True, False])
def test_the_collector_is_off_inside_and_as_before_after(enabled):
    was_enabled, threshold = gc.isenabled(), gc.get_threshold()
    try:
        gc.enable() if enabled else gc.disable()
        with collections_deferred():
            assert not gc.isenabled()
        assert gc.isenabled() == enabled
        assert gc.get_threshold() == threshold
    finally:
        gc.enable() if was_enabled else gc.disable()


def test_objects_made_inside_are_old_and_their_garbage_is_still_freed():
    with collections_deferred():
        kept = Node()
        cycle = Node()
        cycle.other = Node()
        cycle.other.other = cycle
    assert any(item is kept for item in gc.get_objects(generation=2))
    assert not any(item is kept for item in gc.get_objects(generation=0))
    del cycle
    assert gc.collect() >= 2


def test_objects_the_caller_froze_stay_frozen():
    frozen = Node()
    gc.freeze()
    try:
        with collections_deferred():
            made = Node()
        assert gc.get_freeze_count() > 0
        assert not any(item is frozen for item in gc.get_objects())
        assert any(item is made for item in gc.get_objects())
    finally:
        gc.unfreeze()


IMPORT = """
import gc
gc.set_threshold(900, 11, 12)
full = []
gc.callbacks.append(lambda phase, info: full.append(1) if phase == "start" and info["generation"] == 2 else None)
import leapgram
print(len(full), gc.isenabled(), gc.get_threshold(), gc.get_freeze_count())
"""


def test_import_leapgram_runs_no_full_collection_and_keeps_the_settings():
    run = subprocess.run([sys.executable, "-c", IMPORT], check=False, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split() == ["0", "True", "(900,", "11,", "12)", "0"]
    disabled = IMPORT.replace("import leapgram", "gc.disable()\nimport leapgram")
    run = subprocess.run([sys.executable, "-c", disabled], check=False, capture_output=True, text=True, timeout=300)
    assert run.stdout.split()[1] == "False", run.stderr[-2000:]


@pytest.mark.parametrize("enabled", [True, False])
def test_paused_collections_are_off_inside_and_as_before_after(enabled):
    was_enabled = gc.isenabled()
    try:
        gc.enable() if enabled else gc.disable()
        with paused_collections():
            assert not gc.isenabled()
            with paused_collections():  # re-entrant
                assert not gc.isenabled()
            assert not gc.isenabled()
        assert gc.isenabled() == enabled
    finally:
        gc.enable() if was_enabled else gc.disable()


def test_paused_collections_resume_when_the_last_thread_leaves():
    """Two threads overlapping: the first to leave does not turn the collector on under the
    other, and the last one restores it (a saved flag per block would leave it off)."""
    was_enabled = gc.isenabled()
    gc.enable()
    first_in, second_in, first_out, second_out = (threading.Event() for _ in range(4))
    seen = {}

    def first():
        with paused_collections():
            first_in.set()
            second_in.wait(5)
        first_out.set()

    def second():
        first_in.wait(5)
        with paused_collections():
            second_in.set()
            first_out.wait(5)
            seen["after the first left"] = gc.isenabled()
        second_out.set()

    try:
        threads = [threading.Thread(target=first), threading.Thread(target=second)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
        assert seen == {"after the first left": False}
        assert gc.isenabled()
    finally:
        gc.enable() if was_enabled else gc.disable()


def test_a_schema_translates_with_collections_paused(monkeypatch):
    import leapgram
    from leapgram.frontends.json_schema import translate

    seen = []
    build = translate.SchemaTranslator.build

    def watched(self):
        seen.append(gc.isenabled())
        return build(self)

    monkeypatch.setattr(translate.SchemaTranslator, "build", watched)
    was_enabled = gc.isenabled()
    gc.enable()
    try:
        leapgram.Grammar.from_json_schema({"type": "object", "properties": {"a": {"type": "string"}}})
        with pytest.raises(leapgram.GrammarError):
            leapgram.Grammar.from_json_schema({"type": "object", "required": ["a"], "properties": {"a": False}})
        assert seen == [False, False]
        assert gc.isenabled()  # also after a schema that fails
    finally:
        gc.enable() if was_enabled else gc.disable()


def test_the_lexers_process_wide_caches_keep_nothing_the_collector_scans():
    """``literal_states`` and ``segment_states`` (lru caches as old as the process) return
    tuples, bytes and dicts of untracked tuples: after a full collection none of their parts is
    tracked (the tuple that holds a dict stays tracked: five references), so later full
    collections do not scan them (lists were scanned at each, with every item)."""
    from leapgram.parser.lexer_blocks import literal_states, segment_states

    kept = [literal_states(5, 900_001, (900_002, 900_003), 40, 7, 3),
            segment_states((900_004, 900_005, 900_006), (2,), 6, 50)]
    for _ in range(3):  # a tuple is untracked once its items are: a level per collection at worst
        gc.collect()
    for result in kept:
        assert not any(gc.is_tracked(part) for part in result)
