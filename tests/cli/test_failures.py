"""cli/failures.py: a failed step in one plain line, its traceback in a local log file without
secrets; from the errors of real Dagster runs."""

import os
import stat

import dagster as dg

from cataloger_dagster.cli.failures import RunLog, failure_line, plain_message, step_failure


class StoreError(RuntimeError):
    pass


def failed_run(name: str, error: Exception):
    def compute():
        raise error

    return dg.materialize([dg.asset(name=name)(compute)], raise_on_error=False)


def test_the_line_says_what_went_wrong_and_in_which_step_without_class_names():
    step, error = step_failure(failed_run("table_profile", StoreError("could not write catalog.html")))
    assert step == "table_profile"
    assert failure_line(step, error) == "could not write catalog.html (while profiling it)"
    assert "StoreError" in error.to_string()   # the log keeps the whole story


def test_a_python_builtins_name_stays_and_an_unknown_step_is_named():
    step, error = step_failure(failed_run("custom_step", ZeroDivisionError("division by zero")))
    assert failure_line(step, error) == "ZeroDivisionError: division by zero (in step custom_step)"


def test_a_message_over_several_lines_is_one_line():
    _, error = step_failure(failed_run("catalog_page", ValueError("first\n\n  second")))
    assert plain_message(error) == "ValueError: first second"


def test_a_run_without_a_failed_step_has_none():
    assert step_failure(dg.materialize([dg.asset(name="fine")(lambda: 1)])) is None


def test_the_log_is_local_private_appended_and_without_secrets(tmp_path, monkeypatch):
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("MY_API_TOKEN", "tok-0123456789")
    url = "postgres://app:pw-S3cret@db.example/shop"
    log = RunLog("shop", url)
    path = log.write("orders", f"connect to {url} with tok-0123456789 failed")
    log.write("items", "second")
    assert path == str(log.path) and log.path.parent == tmp_path / "home" / "logs" and "shop" in log.path.name
    text = log.path.read_text()
    assert text.startswith("=== orders\n") and "=== items\nsecond" in text
    assert "pw-S3cret" not in text and "tok-0123456789" not in text and "app:***@db.example" in text
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


def test_without_dagster_home_the_log_goes_to_the_temporary_folder(tmp_path, monkeypatch):
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)   # read TMPDIR again
    log = RunLog("shop", "duckdb:///x.duckdb")
    assert not log.path.exists()   # made only when a table fails
    log.write("t", "boom")
    assert log.path.parent == tmp_path / "cataloger-logs"
