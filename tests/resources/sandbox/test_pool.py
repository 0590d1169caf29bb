"""sandbox/pool.py: within `sandbox_pool()`, each private session comes warm from the pool, and
each is a sandbox nobody has used: a table's state never reaches the next table's session."""

from __future__ import annotations

import os

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


def test_each_session_gets_a_fresh_sandbox_and_the_next_one_is_started_meanwhile(backend):
    sandbox = SandboxResource(backend=backend, timeout_s=10)
    with sandbox_pool() as pool:
        assert active_pool() is pool
        with sandbox.session(env=ENV) as a:
            # the host writes table a's snapshot into its private /data
            with open(os.path.join(a.data_dir, "a.duckdb"), "w") as f:
                f.write("table a")
            first = a.execute(LEAVE_STATE)
            assert first.ok, first.error
            assert pool.started == 1  # table b's sandbox is on its way while a runs
        with sandbox.session(env=ENV) as b:
            assert pool.handed_out == 1 and b is not a and b.data_dir != a.data_dir
            seen = b.execute(SEE_STATE)
            assert seen.ok, seen.error
            assert seen.result == "(None, False, None, [])"
            spare_dir = pool._spares[next(iter(pool._spares))][0].wait().data_dir
        assert not os.path.exists(a.data_dir) and not os.path.exists(b.data_dir)
    # the spare nobody took is stopped and its folder removed (the autouse fixture checks the processes)
    assert active_pool() is None and not os.path.exists(spare_dir)


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
        # every run after the first found its sandbox started during the run before
        assert pool.handed_out == 3 and pool.started == 4
    assert [r.output_for_node("uses_sandbox") for r in results] == ["(None, False, None, [])"] * 3


def test_a_deeper_pool_keeps_that_many_fresh_spares_and_hands_out_the_oldest(backend):
    """A batch's tables follow each other faster than one sandbox starts: two spares start side
    by side; each session still gets a sandbox nobody used, and the unused ones are stopped."""
    sandbox = SandboxResource(backend=backend, timeout_s=10)
    with sandbox_pool(2) as pool:
        pool.prime(sandbox, ENV)
        assert pool.started == 2
        seen_dirs = []
        for _ in range(3):
            with sandbox.session(env=ENV) as rt:
                assert rt.execute(SEE_STATE).result == "(None, False, None, [])"
                assert rt.execute(LEAVE_STATE).ok
                seen_dirs.append(rt.data_dir)
        assert pool.handed_out == 3 and pool.started == 5 and len(set(seen_dirs)) == 3
        slots = pool._spares[next(iter(pool._spares))]
        assert [slot.wait() is not None or slot.error for slot in slots] == [True, True]
        spares = [slot.wait().data_dir for slot in slots]
        assert len(spares) == 2 and not set(spares) & set(seen_dirs)
    assert not any(os.path.exists(d) for d in [*seen_dirs, *spares])
    with pytest.raises(ValueError, match="at least one spare"):
        with sandbox_pool(0):
            pass
