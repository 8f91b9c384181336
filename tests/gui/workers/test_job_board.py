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


def test_every_worker_runs_its_jobs_through_one_envelope():
    """run_job: never runs a job cancelled (or, when asked, superseded) while it waited; turns
    Cancelled, one-line errors and unexpected exceptions into outcomes; times the work."""
    from core.errors import InputError
    from gui.workers.jobs import COMPARE, TRANSLATE, Job, compute_queue, run_job

    b = JobBoard()
    ran: list[int] = []

    def work(job):
        ran.append(job.id)
        return job.id * 10

    first, second = b.start(TRANSLATE, supersede=False), b.start(TRANSLATE, supersede=False)
    out = run_job(Job(b, TRANSLATE, first), work, skip_superseded=True)
    assert (out.ran, out.ok, out.value) == (False, False, None) and ran == []  # a newer job exists: skipped
    out = run_job(Job(b, TRANSLATE, second), work)
    assert (out.ok, out.value, ran) == (True, 20, [2]) and out.ms >= 0.0
    b.cancel(TRANSLATE)
    out = run_job(Job(b, TRANSLATE, second), work)
    assert (out.ran, out.cancelled, ran) == (False, True, [2])  # cancelled while it waited: never runs

    job = Job(b, COMPARE, b.start(COMPARE))

    def cancelled_midway(j):
        j.check()  # not cancelled yet: returns
        b.cancel(COMPARE)
        assert j.cancelled()
        j.check()  # raises Cancelled
        raise AssertionError("not reached")

    out = run_job(job, cancelled_midway)
    assert (out.ran, out.cancelled, out.reason) == (True, True, None)

    q = compute_queue("inside")
    assert q == "compute:inside" and isinstance(q, str)
    out = run_job(Job(b, q, b.start(q)), lambda j: (_ for _ in ()).throw(InputError("type Korean first")))
    assert (out.ok, out.reason) == (False, "type Korean first")
    out = run_job(Job(b, q, b.start(q)), lambda j: {}["missing"])
    assert out.reason == "unexpected error: KeyError: 'missing'"
