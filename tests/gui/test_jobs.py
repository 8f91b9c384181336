"""The job board every GUI worker queue uses: ids per queue, cancellation, staleness, shutdown."""

from __future__ import annotations

import threading

import pytest

from gui.workers.jobs import Cancelled, JobBoard


def test_ids_count_per_queue_and_a_new_job_supersedes_the_older_ones():
    b = JobBoard()
    assert b.latest("translate") == 0
    one, two = b.start("translate"), b.start("translate")
    assert (one, two) == (1, 2) and b.start("ablate") == 1  # queues number their own jobs
    assert b.is_cancelled("translate", one) and not b.is_cancelled("translate", two)
    assert not b.is_current("translate", one) and b.is_current("translate", two)
    assert not b.is_cancelled("ablate", 1)  # another queue's jobs are untouched


def test_commands_that_do_not_supersede_run_in_turn_until_cancelled():
    b = JobBoard()
    first, second = b.start("translate", supersede=False), b.start("translate", supersede=False)
    assert not b.is_cancelled("translate", first) and not b.is_cancelled("translate", second)
    b.cancel("translate")
    assert b.is_cancelled("translate", first) and b.is_cancelled("translate", second)
    third = b.start("translate")
    assert not b.is_cancelled("translate", third)  # a job started after Cancel runs
    b.cancel("translate", up_to=1)  # lower than before: changes nothing
    assert not b.is_cancelled("translate", third)


def test_the_stopper_raises_once_cancelled_and_shutdown_cancels_everything():
    b = JobBoard()
    job = b.start("compare")
    stop = b.stopper("compare", job)
    stop()  # not cancelled: returns
    b.cancel("compare")
    with pytest.raises(Cancelled):
        stop()
    later = b.start("compute:inside")
    b.shutdown()
    assert b.is_cancelled("compute:inside", later) and b.is_cancelled("new-queue", b.start("new-queue"))


def test_ids_stay_unique_across_threads():
    b = JobBoard()
    got: list[int] = []
    lock = threading.Lock()

    def take():
        for _ in range(500):
            job = b.start("q", supersede=False)
            with lock:
                got.append(job)

    threads = [threading.Thread(target=take) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(got) == list(range(1, 2001)) and b.latest("q") == 2000
