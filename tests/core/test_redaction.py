"""`redaction`: one `Redactor` for every place a secret could leak.  Each case below is one that
a separate copy used to cover: the database's errors and URLs, the run log's environment
secrets, a notifier's webhook URL and SMTP password, the Anthropic API key, the MCP capsules'
nested values."""

from __future__ import annotations

from pathlib import Path

import pytest

import cataloger_dagster
from cataloger_dagster.core.redaction import (
    MASK,
    Redactor,
    environment_secrets,
    redact_url,
    scrub_secrets,
    url_secrets,
    url_without_userinfo,
)

URL = "postgresql://cat:p%40ss%2Bw0rd@db.example:5432/shop?sslmode=require&api_key=k3y-v4lue"


def test_a_database_url_is_named_without_its_credentials():
    redactor = Redactor(URL)
    text = redactor.text(f"cannot connect to {URL}: password p@ss+w0rd rejected (p%40ss%2Bw0rd, k3y-v4lue)")
    assert redact_url(URL) in text
    for secret in ("p@ss+w0rd", "p%40ss%2Bw0rd", "k3y-v4lue"):
        assert secret not in text
    assert redact_url(URL) == "postgresql://cat:***@db.example:5432/shop?sslmode=require&api_key=***"
    assert {"p%40ss%2Bw0rd", "p@ss+w0rd", "k3y-v4lue"} <= url_secrets(URL)
    assert scrub_secrets(f"x {URL} y", URL) == redactor.text(f"x {URL} y")


def test_a_url_without_credentials_or_that_cannot_be_parsed():
    assert Redactor("duckdb:///tmp/x.duckdb").text("read duckdb:///tmp/x.duckdb") == "read duckdb:///tmp/x.duckdb"
    broken = "postgres://u:pw@[::1/db"
    assert redact_url(broken) == "postgres://(URL hidden: it cannot be parsed)"
    assert "pw" not in Redactor(broken).text(f"bad url {broken}")


def test_an_s3_endpoint_is_named_without_its_user_or_password():
    assert url_without_userinfo("http://AKIAKEY:SeCrEt@localhost:9000/x") == "http://localhost:9000/x"
    assert url_without_userinfo("https://s3.example") == "https://s3.example"


def test_the_environments_secrets_are_masked_in_a_run_log():
    environ = {"ANTHROPIC_API_KEY": "sk-ant-123456", "PGPASSWORD": "hunter2hunter", "PWD": "/home/me/work",
               "GITHUB_TOKEN": "abc", "HOME": "/home/me"}
    secrets = environment_secrets(environ)
    assert set(secrets) == {"sk-ant-123456", "hunter2hunter"}      # not the working directory, not 3 letters
    traceback = f"Traceback: {URL} key sk-ant-123456 pw hunter2hunter in /home/me/work"
    text = Redactor(URL, secrets).text(traceback)
    assert "sk-ant-123456" not in text and "hunter2hunter" not in text and "p%40ss" not in text
    assert "/home/me/work" in text


def test_a_notifiers_webhook_url_and_smtp_password_are_masked_longest_first():
    webhook = "https://hooks.example/services/T000/B000/XXXX"
    redactor = Redactor(secrets=[webhook, "https://hooks.example", "", None])
    assert redactor.text(f"HTTPError posting to {webhook}") == f"HTTPError posting to {MASK}"
    assert Redactor(secrets=["smtp-pw-99"]).text("535 auth failed for smtp-pw-99") == f"535 auth failed for {MASK}"
    assert Redactor(secrets=[""]).text("nothing secret") == "nothing secret"   # no password set


def test_an_api_key_in_an_error_is_masked():
    assert Redactor(secrets=["sk-ant-xyz789"]).text("AuthenticationError: bad key sk-ant-xyz789") == (
        f"AuthenticationError: bad key {MASK}")


def test_nested_values_are_masked_keys_included():
    redactor = Redactor("duckdb://x.duckdb", ["sk-ant-123456"])
    assert redactor.value({"a": ["x sk-ant-123456", 3], "sk-ant-123456": 1, "t": ("sk-ant-123456",)}) == {
        "a": ["x ***", 3], "***": 1, "t": ["***"]}
    assert redactor("a sk-ant-123456") == "a ***"


def test_every_redaction_of_the_package_is_the_redactors():
    """No module but core/redaction.py writes the mask itself: each masks through the Redactor."""
    package = Path(cataloger_dagster.__file__).resolve().parent
    writers = [p.relative_to(package).as_posix() for p in package.rglob("*.py")
               if '"***"' in p.read_text() or "'***'" in p.read_text()]
    assert writers == ["core/redaction.py"]


# ---------------------------------------------------------------- database URLs, every form of a password

def test_redact_url():
    assert redact_url("postgres://u:p%40ss@h:5432/db") == "postgres://u:***@h:5432/db"
    assert redact_url("duckdb://x.db") == "duckdb://x.db"


@pytest.mark.parametrize("url, expected", [
    ("postgres://u:p%40ss@h:5432/db", "postgres://u:***@h:5432/db"),
    ("postgres://u:p@ss@h/db", "postgres://u:***@h/db"),  # an unquoted @ in the password
    ("postgres://:pw@h/db", "postgres://:***@h/db"),
    ("postgres://u@h/db?password=pw&sslmode=require", "postgres://u@h/db?password=***&sslmode=require"),
    ("postgres://u@h/db?sslmode=require&pass=pw", "postgres://u@h/db?sslmode=require&pass=***"),
    ("mysql://u@h/db?pwd=pw", "mysql://u@h/db?pwd=***"),
    ("mysql://u:p%40ss@h:3306/db?charset=utf8mb4", "mysql://u:***@h:3306/db?charset=utf8mb4"),
    ("mariadb://u@h/db?password=pw&ssl_mode=REQUIRED", "mariadb://u@h/db?password=***&ssl_mode=REQUIRED"),
    ("postgres://u@h/db?sslpassword=pw&PASSWORD=pw2", "postgres://u@h/db?sslpassword=***&PASSWORD=***"),
    ("duckdb:///x.db?motherduck_token=tok&read_only=true", "duckdb:///x.db?motherduck_token=***&read_only=true"),
    ("snowflake://u:pw@acct/db?private_key=k&warehouse=w", "snowflake://u:***@acct/db?private_key=***&warehouse=w"),
    ("postgres://u:pw@h/db?password=pw", "postgres://u:***@h/db?password=***"),
    ("postgres://u:p\tw@h/db", "postgres://u:***@h/db"),  # urlsplit drops the tab
    # nothing secret: left exactly as written
    ("duckdb://x.db", "duckdb://x.db"),
    ("postgres://u@h/db?schema=s&password=", "postgres://u@h/db?schema=s&password="),
    ("data/demo.duckdb", "data/demo.duckdb"),
])
def test_redact_url_hides_passwords_in_the_userinfo_and_the_query(url, expected):
    assert redact_url(url) == expected


def test_redact_url_hides_a_url_it_cannot_parse():
    assert redact_url("postgres://u:pw@[::1/db") == "postgres://(URL hidden: it cannot be parsed)"


def test_scrub_secrets_removes_every_form_of_the_password():
    url = "postgres://u:p%2Fw%21@h/db?sslpassword=s+p&x=1"
    echoed = f"bad {url}; dsn password=p/w! sslpassword='s p' or p%2Fw%21"
    scrubbed = scrub_secrets(echoed, url)
    assert "p/w!" not in scrubbed and "p%2Fw%21" not in scrubbed and "s p" not in scrubbed
    assert redact_url(url) in scrubbed  # the URL itself is still named, without its secrets
