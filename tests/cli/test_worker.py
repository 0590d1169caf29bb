"""cli/worker.py: the worker process of `cataloger run --jobs N`, started as the runner starts it.

`python -m cataloger_dagster.cli.worker` with two pipes: it ends quietly when told to or when the
runner is gone, and a setup it cannot use makes it end with an error (the runner then reports its
tables failed: tests/cli/test_batches.py).  Cataloging through it: test_batches.py's worker test.
"""

import os
import subprocess
import sys
from multiprocessing.connection import Connection

import pytest


def start_worker() -> tuple[subprocess.Popen, Connection, Connection]:
    batches_out, batches_in = os.pipe()
    reports_out, reports_in = os.pipe()
    process = subprocess.Popen([sys.executable, "-m", "cataloger_dagster.cli.worker", str(batches_out), str(reports_in)],
                               pass_fds=(batches_out, reports_in), stderr=subprocess.PIPE, text=True)
    os.close(batches_out)
    os.close(reports_in)
    return process, Connection(batches_in, readable=False), Connection(reports_out, writable=False)


@pytest.mark.slow
def test_a_worker_told_to_stop_before_any_batch_ends_cleanly():
    process, batches, reports = start_worker()
    batches.send(None)
    assert process.wait(60) == 0
    # it answered nothing: its end of the reports pipe is closed
    assert reports.poll(5)
    try:
        reports.recv()
        raise AssertionError("the worker sent something")
    except EOFError:
        pass


@pytest.mark.slow
def test_a_worker_whose_runner_is_gone_ends_cleanly():
    process, batches, reports = start_worker()
    batches.close()   # as when the runner is killed
    assert process.wait(60) == 0
    assert "Traceback" not in process.stderr.read()


@pytest.mark.slow
def test_a_setup_it_cannot_use_ends_it_with_the_error():
    process, batches, reports = start_worker()
    batches.send(("not", "a setup"))
    assert process.wait(60) != 0
    assert "ValueError" in process.stderr.read()
