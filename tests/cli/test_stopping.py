"""cli/stopping.py: SIGINT and SIGTERM stop `cataloger run`, even while Dagster's own handlers
hold the signals (a real in-process Dagster run interrupted by a real signal)."""

import os
import signal
import time

import dagster as dg
import pytest

from cataloger_dagster.cli.stopping import Interrupted, check_stop, stop_on_signals, stop_requested


def test_a_signal_raises_interrupted_with_the_shells_exit_code():
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    with stop_on_signals():
        with pytest.raises(Interrupted) as stopped:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
        assert stopped.value.signo == signal.SIGTERM and stopped.value.exit_code == 143
        assert isinstance(stopped.value, KeyboardInterrupt) and str(stopped.value) == "SIGTERM"
        # a second signal while the first is being handled (cleaning up) breaks nothing off
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.1)
        assert stop_requested() == signal.SIGTERM
    assert {s: signal.getsignal(s) for s in before} == before   # put back as they were
    assert stop_requested() is None


def test_a_signal_dagster_turned_into_a_failed_run_is_still_a_stop():
    @dg.asset
    def slow():
        os.kill(os.getpid(), signal.SIGINT)   # Ctrl-C while a step runs
        time.sleep(300)

    with stop_on_signals():
        started = time.monotonic()
        result = dg.materialize([slow], raise_on_error=False)
        # Dagster stopped the step at once, not after its sleep (the run's own start is slow on a busy machine)
        assert not result.success and time.monotonic() - started < 150
        with pytest.raises(Interrupted) as stopped:
            check_stop()
        assert stopped.value.exit_code == 130


def test_without_a_signal_nothing_stops():
    with stop_on_signals():
        check_stop()
        assert stop_requested() is None
