"""The transition table, exhaustively: every (status, event) pair."""

from __future__ import annotations

import itertools

import pytest

from app.fsm import TRANSITIONS, Event, TransitionError, WorkflowStatus, next_status, sources

S, E = WorkflowStatus, Event

EXPECTED = {
    (None, E.START): S.RUNNING,
    (S.RUNNING, E.FINISH): S.COMPLETED,
    (S.RUNNING, E.STOP): S.STOPPED,
    (S.RUNNING, E.FAIL): S.FAILED,
    **{(s, E.START): S.RUNNING for s in (S.COMPLETED, S.STOPPED, S.FAILED)},
    **{(s, E.DELETE): S.DELETED for s in (S.RUNNING, S.COMPLETED, S.STOPPED, S.FAILED)},
    (S.RUNNING, E.WAIT): S.WAITING,
    (S.WAITING, E.RESUME): S.RUNNING,
    (S.WAITING, E.REJECT): S.STOPPED,
    (S.WAITING, E.EXPIRE): S.STOPPED,
    (S.WAITING, E.STOP): S.STOPPED,
    (S.WAITING, E.DELETE): S.DELETED,
}

PAIRS = list(itertools.product([None, *WorkflowStatus], Event))


@pytest.mark.parametrize(("status", "event"), PAIRS, ids=lambda v: getattr(v, "value", "none"))
def test_every_pair_is_legal_exactly_as_the_contract_says(status, event):
    if (status, event) in EXPECTED:
        assert next_status(status, event) is EXPECTED[(status, event)]
    else:
        with pytest.raises(TransitionError) as caught:
            next_status(status, event)
        assert caught.value.status_code == 409
        assert event.value in caught.value.detail


def test_the_table_holds_nothing_else():
    assert TRANSITIONS == EXPECTED


def test_conflict_messages_tell_what_to_do():
    with pytest.raises(TransitionError, match="still running; wait for it or stop it first"):
        next_status(S.RUNNING, E.START)
    with pytest.raises(TransitionError, match="already completed"):
        next_status(S.COMPLETED, E.STOP)


def test_compare_and_set_sources_follow_the_table():
    assert set(sources(E.START)) == {S.COMPLETED, S.STOPPED, S.FAILED}
    assert sources(E.STOP) == [S.RUNNING, S.WAITING]
    assert sources(E.RESUME) == [S.WAITING]


def test_a_decision_without_a_wait_says_why():
    with pytest.raises(TransitionError, match="waits for no decision"):
        next_status(S.RUNNING, E.RESUME)
