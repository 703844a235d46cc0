"""Giving the server's freed memory back (pcrp.app.memory): a class leaving at once makes one trim, not thirty; a
trim asked for after another makes its own; a closed page session asks for one."""

import time

import pytest

from pcrp.app import memory


@pytest.fixture
def trims(monkeypatch):
    """The trims made, with glibc's malloc_trim replaced by a counter and the wait shortened."""
    made = []
    monkeypatch.setattr(memory, "_TRIM", lambda pad: made.append(pad))
    monkeypatch.setattr(memory, "RELEASE_DELAY_SECONDS", 0.2)
    monkeypatch.setattr(memory, "_PENDING", {"timer": None})
    return made


def wait_for(condition, seconds=5.0):
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.02)
    return condition()


def test_the_requests_of_a_class_leaving_at_once_make_one_trim(trims):
    for _ in range(30):
        memory.release_soon()
    assert not trims  # not in the caller's thread, and not yet
    assert wait_for(lambda: trims == [0])
    time.sleep(0.4)
    assert trims == [0]


def test_a_request_after_a_trim_makes_another(trims):
    memory.release_soon()
    assert wait_for(lambda: len(trims) == 1)
    memory.release_soon()  # memory freed after the first trim (the registry forgets runs 20 s after the tabs close)
    assert wait_for(lambda: len(trims) == 2)


def test_without_glibc_nothing_is_called(monkeypatch):
    monkeypatch.setattr(memory, "_TRIM", None)
    assert memory.return_freed_memory() is False
    memory.release_soon()
    assert memory._PENDING["timer"] is None


def test_a_closed_page_session_asks_for_the_memory_it_held_back(monkeypatch):
    """Streamlit's release of a session (tab closed, reload) closes its one state object, then asks for a trim."""
    from app_pages import shared
    from pcrp.app.page_session import PageSession

    asked, closed = [], []
    monkeypatch.setattr(shared, "release_soon", lambda: asked.append(closed[:]))
    session = PageSession()
    monkeypatch.setattr(session, "close", lambda: closed.append(True))
    shared._close_session(session)
    assert asked == [[True]]  # after the object let go of what it held
