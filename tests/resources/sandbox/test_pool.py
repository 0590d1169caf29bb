"""sandbox/pool.py: within `sandbox_pool()`, each private session comes warm from the pool, a
sandbox cleaned after the last session with a worker nobody ran a cell in: a table's state never
reaches the next table's session (test_recycle.py tries harder)."""

from __future__ import annotations

import os
import time

import dagster as dg
import pytest

from cataloger_dagster.resources.sandbox import SandboxError, SandboxResource
from cataloger_dagster.resources.sandbox.pool import active_pool, sandbox_pool

ENV = {"DB_CONNECTION_STRING": "duckdb:///data/snapshot.duckdb?read_only=true"}
# what a table's cells leave behind, in every place a later session could look
LEAVE_STATE = ("import os\nLEFT = 'table a'\nopen('/tmp/left-by-a', 'w').write('a')\n"
               "os.environ['LEFT_BY_A'] = '1'\nos.getpid()")
SEE_STATE = ("import os\n(globals().get('LEFT'), os.path.exists('/tmp/left-by-a'), os.environ.get('LEFT_BY_A'), "
             "sorted(os.listdir('/data')))")


def test_each_session_gets_a_cleaned_sandbox_with_a_worker_nobody_used(backend):
    sandbox = SandboxResource(backend=backend, timeout_s=10)
    with sandbox_pool() as pool:
        assert active_pool() is pool
        with sandbox.session(env=ENV) as a:
            assert a.recyclable
            # the host writes table a's snapshot into its private /data
            with open(os.path.join(a.data_dir, "a.duckdb"), "w") as f:
                f.write("table a")
            first = a.execute(LEAVE_STATE)
            assert first.ok, first.error
        with sandbox.session(env=ENV) as b:
            # the same sandbox (its /data folder is its own), cleaned: a worker nobody used,
            # an empty /data and /tmp; no other sandbox was started
            assert pool.handed_out == 1 and pool.recycled == 1 and pool.started == 0
            assert b is not a and b.data_dir == a.data_dir and b.worker_pid != a.worker_pid
            seen = b.execute(SEE_STATE)
            assert seen.ok, seen.error
            assert seen.result == "(None, False, None, [])"
            with pytest.raises(SandboxError, match="closed"):
                a.execute("1")  # the last session's runtime can no longer reach the sandbox
        data_dir = b.data_dir
        assert os.path.exists(data_dir)  # cleaned for the next session, kept by the pool
    # the sandbox nobody took is stopped and its folder removed (the autouse fixture checks the processes)
    assert active_pool() is None and not os.path.exists(data_dir)


def test_a_session_of_another_env_or_settings_is_not_given_the_spare(backend):
    sandbox = SandboxResource(backend=backend, timeout_s=10)
    with sandbox_pool() as pool:
        with sandbox.session(env=ENV):
            pass
        with sandbox.session(env={"OTHER": "1"}) as other:
            assert pool.handed_out == 0
            assert other.execute("import os\n'DB_CONNECTION_STRING' in os.environ").result == "False"
        with SandboxResource(backend=backend, timeout_s=10, memory_mb=384).session(env=ENV):
            assert pool.handed_out == 0
        with sandbox.session(env=ENV):
            assert pool.handed_out == 1


def test_a_spare_that_cannot_start_leaves_the_error_to_the_session_that_needs_it():
    sandbox = SandboxResource(backend="docker", image="cataloger-no-such-image:0")
    with sandbox_pool() as pool:
        pool.prime(sandbox, ENV)
        with pytest.raises(SandboxError):
            with sandbox.session(env=ENV):
                pass
        assert pool.handed_out == 0


def test_runs_in_the_pool_take_their_sandbox_from_it_not_from_their_own_start(backend):
    sandbox = SandboxResource(backend=backend, timeout_s=10, prestart_env=ENV)

    @dg.asset
    def uses_sandbox(sandbox: SandboxResource) -> str:
        with sandbox.session(env=ENV) as rt:
            seen = rt.execute(SEE_STATE).result
            assert rt.execute(LEAVE_STATE).ok
            return seen

    with sandbox_pool() as pool:
        results = [dg.materialize([uses_sandbox], resources={"sandbox": sandbox}) for _ in range(3)]
        # each run's start asked the pool for a sandbox instead of starting one of its own;
        # one sandbox served the three runs, cleaned after each
        assert pool.handed_out == 3 and pool.started == 1
    assert pool.recycled == 3 and pool.unclean == 0
    assert [r.output_for_node("uses_sandbox") for r in results] == ["(None, False, None, [])"] * 3


def test_a_deeper_pool_keeps_that_many_sandboxes_and_hands_out_the_oldest(backend):
    """A batch's tables follow each other faster than a sandbox is cleaned: two sandboxes take
    turns; each session still gets a worker nobody used, and both are stopped at the end."""
    sandbox = SandboxResource(backend=backend, timeout_s=10)
    with sandbox_pool(2) as pool:
        pool.prime(sandbox, ENV)
        assert pool.started == 2
        seen = []
        for _ in range(3):
            with sandbox.session(env=ENV) as rt:
                assert rt.execute(SEE_STATE).result == "(None, False, None, [])"
                assert rt.execute(LEAVE_STATE).ok
                seen.append((rt.supervisor_pid, rt.worker_pid, rt.data_dir))
        assert pool.handed_out == 3 and pool.started == 2
        # the third session had the first's sandbox (its /data folder) back, cleaned, with
        # another worker: the oldest spare
        assert seen[2][2] == seen[0][2] and seen[1][2] != seen[0][2] and seen[2][1] != seen[0][1]
    assert pool.recycled == 3
    assert not any(os.path.exists(d) for _, _, d in seen)
    with pytest.raises(ValueError, match="at least one spare"):
        with sandbox_pool(0):
            pass


def test_a_sandbox_that_cannot_be_reused_is_started_afresh_per_session():
    """Without a pid namespace (isolation='none') nothing can prove the sandbox clean: each
    session gets a new one, and the pool keeps one starting, as before reuse."""
    sandbox = SandboxResource(backend="local", isolation="none", timeout_s=10)
    with pytest.warns(RuntimeWarning, match="isolation='none'"), sandbox_pool() as pool:
        folders = []
        for _ in range(2):
            with sandbox.session(env=ENV) as rt:
                assert not rt.recyclable
                folders.append(rt.data_dir)
        assert folders[0] != folders[1] and pool.recycled == 0 and pool.started == 2


def test_a_sandbox_the_pool_started_keeps_its_bwrap(local_sandbox):
    """bwrap dies with the thread that started it (--die-with-parent is the parent thread's death):
    the pool starts its sandboxes in threads that live as long as it does."""
    sandbox = SandboxResource(backend="local", timeout_s=10)
    with sandbox_pool() as pool:
        pool.prime(sandbox, ENV)
        for _ in range(2):  # a sandbox the pool started, then the same one cleaned
            with sandbox.session(env=ENV) as rt:
                assert rt.execute("1 + 1").result == "2"
                time.sleep(0.2)
                assert rt._channel.proc.poll() is None
        assert pool.handed_out == 2 and pool.recycled >= 1
