"""sandbox/pool.py: each private session given the pool comes warm from it, a sandbox cleaned
after the last session with a worker nobody ran a cell in: a table's state never reaches the next
table's session (test_recycle.py tries harder).  In a run, the pool is the `sandbox_pool`
resource the asset names: the run's own, stopped at its end, or one kept across runs."""

from __future__ import annotations

import os
import time

import dagster as dg
import pytest

from cataloger_dagster.resources.sandbox import SandboxError, SandboxResource
from cataloger_dagster.resources.sandbox.pool import SandboxPool, sandbox_pool_resource

ENV = {"DB_CONNECTION_STRING": "duckdb:///data/snapshot.duckdb?read_only=true"}
# what a table's cells leave behind, in every place a later session could look
LEAVE_STATE = ("import os\nLEFT = 'table a'\nopen('/tmp/left-by-a', 'w').write('a')\n"
               "os.environ['LEFT_BY_A'] = '1'\nos.getpid()")
SEE_STATE = ("import os\n(globals().get('LEFT'), os.path.exists('/tmp/left-by-a'), os.environ.get('LEFT_BY_A'), "
             "sorted(os.listdir('/data')))")


def test_each_session_gets_a_cleaned_sandbox_with_a_worker_nobody_used(backend):
    sandbox = SandboxResource(backend=backend, timeout_s=10)
    with SandboxPool() as pool:
        with sandbox.session(env=ENV, pool=pool) as a:
            assert a.recyclable
            # the host writes table a's snapshot into its private /data
            with open(os.path.join(a.data_dir, "a.duckdb"), "w") as f:
                f.write("table a")
            first = a.execute(LEAVE_STATE)
            assert first.ok, first.error
        with sandbox.session(env=ENV, pool=pool) as b:
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
    assert pool.closed and not os.path.exists(data_dir)


def test_a_session_of_another_env_or_settings_is_not_given_the_spare(backend):
    sandbox = SandboxResource(backend=backend, timeout_s=10)
    with SandboxPool() as pool:
        with sandbox.session(env=ENV, pool=pool):
            pass
        with sandbox.session(env={"OTHER": "1"}, pool=pool) as other:
            assert pool.handed_out == 0
            assert other.execute("import os\n'DB_CONNECTION_STRING' in os.environ").result == "False"
        with SandboxResource(backend=backend, timeout_s=10, memory_mb=384).session(env=ENV, pool=pool):
            assert pool.handed_out == 0
        with sandbox.session(env=ENV, pool=pool):
            assert pool.handed_out == 1


def test_a_spare_that_cannot_start_leaves_the_error_to_the_session_that_needs_it():
    sandbox = SandboxResource(backend="docker", image="cataloger-no-such-image:0")
    with SandboxPool() as pool:
        pool.prime(sandbox, ENV)
        with pytest.raises(SandboxError):
            with sandbox.session(env=ENV, pool=pool):
                pass
        assert pool.handed_out == 0


def _uses_sandbox(pools: list):
    @dg.asset
    def uses_sandbox(sandbox: SandboxResource, sandbox_pool: dg.ResourceParam[SandboxPool]) -> str:
        pools.append(sandbox_pool)
        with sandbox.session(env=ENV, pool=sandbox_pool) as rt:
            seen = rt.execute(SEE_STATE).result
            assert rt.execute(LEAVE_STATE).ok
            return seen

    return uses_sandbox


def test_runs_given_a_kept_pool_take_their_sandbox_from_it(backend):
    sandbox = SandboxResource(backend=backend, timeout_s=10)
    pools: list = []
    with SandboxPool() as pool:
        resources = {"sandbox": sandbox, "sandbox_pool": sandbox_pool_resource(ENV, pool=pool)}
        results = [dg.materialize([_uses_sandbox(pools)], resources=resources) for _ in range(3)]
        # each run's start asked the pool for a sandbox (prestart); one sandbox served the
        # three runs, cleaned after each, and the pool outlived the runs
        assert pools == [pool] * 3 and not pool.closed
        assert pool.handed_out == 3 and pool.started == 1
    assert pool.recycled == 3 and pool.unclean == 0
    assert [r.output_for_node("uses_sandbox") for r in results] == ["(None, False, None, [])"] * 3


def test_a_run_without_a_kept_pool_opens_its_own_and_stops_it_at_its_end(backend):
    """As a run of `dagster dev` or `dg.materialize` over the settings' resources: the pool starts
    the sandbox as the run begins, the asset takes it, and nothing of it outlives the run (the
    autouse fixture checks that no process or container is left)."""
    sandbox = SandboxResource(backend=backend, timeout_s=10)
    pools: list = []
    with dg.instance_for_test() as instance:
        results = [
            dg.materialize([_uses_sandbox(pools)], instance=instance,
                           resources={"sandbox": sandbox, "sandbox_pool": sandbox_pool_resource(ENV)})
            for _ in range(2)
        ]
        logs = [e.user_message for r in results for e in instance.all_logs(r.run_id) if "sandbox pool" in e.user_message]
    assert len(pools) == 2 and pools[0] is not pools[1]   # one per run
    assert all(p.closed and p.handed_out == 1 and p.started == 1 for p in pools)
    assert [r.output_for_node("uses_sandbox") for r in results] == ["(None, False, None, [])"] * 2
    assert logs == ["sandbox pool stopped: 1 session(s) served warm, 1 sandbox(es) started, "
                    "1 cleaned for another session"] * 2


def test_a_deeper_pool_keeps_that_many_sandboxes_and_hands_out_the_oldest(backend):
    """A batch's tables follow each other faster than a sandbox is cleaned: two sandboxes take
    turns; each session still gets a worker nobody used, and both are stopped at the end."""
    sandbox = SandboxResource(backend=backend, timeout_s=10)
    with SandboxPool(2) as pool:
        pool.prime(sandbox, ENV)
        assert pool.started == 2
        seen = []
        for _ in range(3):
            with sandbox.session(env=ENV, pool=pool) as rt:
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
        SandboxPool(0)


def test_a_sandbox_that_cannot_be_reused_is_started_afresh_per_session():
    """Without a pid namespace (isolation='none') nothing can prove the sandbox clean: each
    session gets a new one, and the pool keeps one starting, as before reuse."""
    sandbox = SandboxResource(backend="local", isolation="none", timeout_s=10)
    with pytest.warns(RuntimeWarning, match="isolation='none'"), SandboxPool() as pool:
        folders = []
        for _ in range(2):
            with sandbox.session(env=ENV, pool=pool) as rt:
                assert not rt.recyclable
                folders.append(rt.data_dir)
        assert folders[0] != folders[1] and pool.recycled == 0 and pool.started == 2


def test_a_sandbox_the_pool_started_keeps_its_bwrap(local_sandbox):
    """bwrap dies with the thread that started it (--die-with-parent is the parent thread's death):
    the pool starts its sandboxes in threads that live as long as it does."""
    sandbox = SandboxResource(backend="local", timeout_s=10)
    with SandboxPool() as pool:
        pool.prime(sandbox, ENV)
        for _ in range(2):  # a sandbox the pool started, then the same one cleaned
            with sandbox.session(env=ENV, pool=pool) as rt:
                assert rt.execute("1 + 1").result == "2"
                time.sleep(0.2)
                assert rt._channel.proc.poll() is None
        assert pool.handed_out == 2 and pool.recycled >= 1
