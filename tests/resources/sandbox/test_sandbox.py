"""SandboxResource (the sandbox package's __init__): its settings reaching the sandbox, sessions
over the caller's folder or a private one, and the sandbox started ahead of time with the run."""

from __future__ import annotations

import logging
import os
import tempfile
import time

import dagster as dg
import pydantic
import pytest

from cataloger_dagster.resources.sandbox import SandboxError, SandboxResource, datadir

ENV = {"DB_CONNECTION_STRING": "duckdb:///data/snapshot.duckdb?read_only=true"}
# the warm-up leaves a mark a while after the interpreter starts
SLOW_WARMUP = "import time\ntime.sleep(1.0)\nopen('/tmp/warmed', 'w').write('yes')\n"
SEES_MARK = "import os\nos.path.exists('/tmp/warmed')"


def test_a_session_without_data_dir_has_a_private_one(backend):
    sandbox = SandboxResource(backend=backend, timeout_s=10)
    with sandbox.session(env=ENV) as rt:
        folder = rt.data_dir
        assert oct(os.stat(folder).st_mode & 0o777) == "0o700" and os.listdir(folder) == []
        (open(os.path.join(folder, "t.csv"), "w")).write("a\n1\n")  # written after the start
        r = rt.execute("import os\nprint(os.listdir('/data'), os.environ['DB_CONNECTION_STRING'])")
        assert r.ok, r.error
        assert r.stdout == f"['t.csv'] {ENV['DB_CONNECTION_STRING']}\n"
        denied = rt.execute("open('/data/x', 'w')")
        assert not denied.ok  # still read-only inside
    assert not os.path.exists(folder)


def test_the_spare_goes_only_to_a_session_with_its_env(backend):
    sandbox = SandboxResource(backend=backend, timeout_s=10, prestart_env=ENV)
    sandbox.setup_for_execution(dg.build_init_resource_context())
    spare = sandbox._spare
    assert spare is not None
    try:
        with sandbox.session(env={"OTHER": "1"}) as rt:
            assert rt is not spare
        with sandbox.session(spare.data_dir, env=ENV) as rt:  # a folder of the caller's own
            assert rt is not spare
        with sandbox.session(env=ENV) as rt:
            assert rt is spare and rt.execute("1 + 1").result == "2"
        assert sandbox._spare is None  # handed out once
        with sandbox.session(env=ENV) as rt:
            assert rt is not spare
    finally:
        sandbox.teardown_after_execution(dg.build_init_resource_context())


def test_an_unused_spare_is_stopped_and_removed_at_teardown(backend):
    sandbox = SandboxResource(backend=backend, timeout_s=10, prestart_env=ENV)
    sandbox.setup_for_execution(dg.build_init_resource_context())
    folder = sandbox._spare.data_dir
    sandbox.teardown_after_execution(dg.build_init_resource_context())
    assert sandbox._spare is None and not os.path.exists(folder)
    # (the autouse fixture checks that no process or container is left)


def _run_two_steps(sandbox: SandboxResource) -> bool:
    @dg.asset
    def before():
        time.sleep(2.5)  # the steps before the investigations (profile, detectors) take a while
        return 1

    @dg.asset
    def uses_sandbox(before, sandbox: SandboxResource) -> bool:
        with sandbox.session(env=ENV) as rt:
            r = rt.execute(SEES_MARK)
            assert r.ok, r.error
            return r.result == "True"

    result = dg.materialize([before, uses_sandbox], resources={"sandbox": sandbox})
    assert result.success
    return result.output_for_node("uses_sandbox")


def test_in_a_run_the_sandbox_is_warm_before_its_step_begins(backend):
    slow = dict(backend=backend, timeout_s=10, warmup=SLOW_WARMUP)
    assert _run_two_steps(SandboxResource(**slow, prestart_env=ENV)) is True
    # the same run without prestart: the warm-up is still under way at the first cell
    assert _run_two_steps(SandboxResource(**slow)) is False


def test_a_sandbox_that_cannot_start_ahead_fails_in_its_step_not_at_setup():
    sandbox = SandboxResource(backend="docker", image="cataloger-no-such-image:0", prestart_env=ENV)

    @dg.asset
    def needs_sandbox(sandbox: SandboxResource) -> None:
        with sandbox.session(env=ENV):
            pass

    result = dg.materialize([needs_sandbox], resources={"sandbox": sandbox}, raise_on_error=False)
    assert not result.success
    # the run started; the step that needed the sandbox failed, saying what to do
    failure = result.failure_data_for_node("needs_sandbox")
    message = failure.error.to_string()
    assert "SandboxError" in message
    assert "build-image" in message or "running Docker engine" in message


# ---------------------------------------------------------------- settings and folders
def test_only_the_known_backends_and_isolations_are_accepted():
    with pytest.raises(pydantic.ValidationError, match="backend"):
        SandboxResource(backend="podman")
    with pytest.raises(pydantic.ValidationError, match="isolation"):
        SandboxResource(isolation="chroot")


def test_the_resources_settings_reach_the_sandbox(backend, data_dir):
    sandbox = SandboxResource(backend=backend, timeout_s=1.5, memory_mb=384, tmp_size_mb=24, output_cap_bytes=4096)
    with sandbox.session(str(data_dir)) as rt:
        assert rt.label == f"{backend} sandbox" and rt.data_dir == str(data_dir)
        r = rt.execute("import os, resource\nst = os.statvfs('/tmp')\n"
                       "(st.f_blocks * st.f_frsize, resource.getrlimit(resource.RLIMIT_AS)[0])")
        assert r.ok and eval(r.result) == (24 << 20, 384 << 20), r
        t0 = time.monotonic()
        r = rt.execute("while True:\n    pass")  # no limit given: the resource's
        assert r.timed_out and 1.5 <= time.monotonic() - t0 < 1.5 + 2, r
        r = rt.execute("print('x' * 20000)")
        assert r.ok and r.truncated and len(r.stdout) < 4096 + 100, r
        assert f"# {backend} sandbox, exported" in rt.get_session_script()


def test_a_data_dir_that_is_not_a_folder_is_refused(backend, data_dir):
    for path in (data_dir / "table.csv", data_dir / "missing"):
        with pytest.raises(SandboxError, match="is not a directory"):
            SandboxResource(backend=backend).open_session(str(path))


def test_the_callers_folder_is_left_and_a_private_one_goes_even_when_the_body_fails(backend, data_dir):
    sandbox = SandboxResource(backend=backend, timeout_s=10)
    with sandbox.session(str(data_dir)) as rt:
        assert rt.execute("1").ok
    assert sorted(p.name for p in data_dir.iterdir()) == ["table.csv"]
    with pytest.raises(RuntimeError, match="the step failed"):
        with sandbox.session() as rt:
            folder = rt.data_dir
            raise RuntimeError("the step failed")
    assert not os.path.exists(folder)
    with pytest.raises(SandboxError, match="closed"):
        rt.execute("1")


def _private_folders() -> set[str]:
    return {p for p in os.listdir(tempfile.gettempdir()) if p.startswith(datadir.PREFIX)}


def test_a_private_folder_goes_when_its_sandbox_cannot_start():
    before = _private_folders()
    with pytest.raises(SandboxError):
        with SandboxResource(backend="docker", image="cataloger-no-such-image:0").session(env=ENV):
            pass
    assert _private_folders() <= before


def test_a_spare_that_cannot_start_is_a_warning_in_the_runs_log():
    sandbox = SandboxResource(backend="docker", image="cataloger-no-such-image:0", prestart_env=ENV)

    @dg.asset
    def needs_nothing(sandbox: SandboxResource) -> int:
        return 1

    with dg.instance_for_test() as instance:
        result = dg.materialize([needs_nothing], resources={"sandbox": sandbox}, instance=instance)
        assert result.success
        warnings = [e.user_message for e in instance.all_logs(result.run_id)
                    if e.level == logging.WARNING and "ahead of time" in e.user_message]
    assert len(warnings) == 1 and "could not start a sandbox ahead of time" in warnings[0]
    assert sandbox._spare is None
