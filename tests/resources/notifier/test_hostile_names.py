"""A table name is data in an alert: it never breaks the message of the other tables of its run.

One run's message carries the alerts of every table of the batch.  Through a real SMTP server
(aiosmtpd): a name with U+2028 (which Python's e-mail package refuses in a header) is shown
escaped in the Subject and delivered with the others; a name no encoding can carry (a lone
surrogate, as a driver's surrogateescape gives) fails its own table's alerts alone, recorded in
the store's alerts log, and the other tables' alerts are delivered."""

import json
import logging

import pytest

from cataloger_dagster.core.alerts import Alert, AlertMessage
from cataloger_dagster.core.layout import ALERTS
from cataloger_dagster.resources.notifier import SmtpNotifier
from cataloger_dagster.resources.store import store_from_url
from cataloger_dagster.sensors.alert_sensor import deliver
from tests.support.receivers import smtp_receiver

pytestmark = pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS:UserWarning")

SEPARATED = "orders\u2028Subject: forged"
UNENCODABLE = "bad\udcff"


def alert(table: str) -> Alert:
    return Alert(table=table, owner="sales", kind="new_high", issue_id=f"{table}:missing", issue_type="missing_values",
                 severity="high", description="rows are missing", page="file:///p#issue-1", evidence="file:///i.json")


def send(tmp_path, *tables: str, caplog):
    store = store_from_url(str(tmp_path / "store"))
    log = logging.getLogger("alert-test")
    with smtp_receiver() as smtp, caplog.at_level(logging.INFO, logger="alert-test"):
        notifier = SmtpNotifier(host=smtp.host, port=smtp.port, sender="cat@example.org",
                                recipients=["a@example.org"], attempts=1, backoff_s=0, timeout_s=5)
        delivered, failed = deliver(log, store, "shop.duckdb", notifier,
                                    AlertMessage(run_id="r", alerts=[alert(t) for t in tables]))
    entries = [json.loads(data) for _, data in store.read_entries(f"shop.duckdb/{ALERTS}")]
    return smtp.messages, delivered, failed, entries


def test_a_line_separator_in_a_name_is_escaped_in_the_subject_and_every_alert_is_delivered(tmp_path, caplog):
    messages, delivered, failed, entries = send(tmp_path, "customers", SEPARATED, caplog=caplog)
    assert failed == 0 and delivered == {("customers", "new_high:customers:missing:"),
                                         (SEPARATED, f"new_high:{SEPARATED}:missing:")}
    (mail,) = messages
    assert mail["Subject"] == "cataloger: 2 alerts on customers, orders\\u2028Subject: forged"
    assert "\u2028" not in str(mail["Subject"]) and SEPARATED in mail.get_payload(decode=True).decode()
    assert [e["ok"] for e in entries] == [True]
    assert all("\u2028" not in r.getMessage() for r in caplog.records)


def test_a_name_no_encoding_can_carry_fails_its_own_table_alone(tmp_path, caplog):
    messages, delivered, failed, entries = send(tmp_path, "customers", UNENCODABLE, SEPARATED, caplog=caplog)
    assert failed == 1
    assert {table for table, _ in delivered} == {"customers", SEPARATED}
    assert sorted(m["Subject"] for m in messages) == ["cataloger: 1 alert on customers",
                                                     "cataloger: 1 alert on orders\\u2028Subject: forged"]
    bad = [e for e in entries if not e["ok"]]
    assert len(entries) == 3 and len(bad) == 1
    assert [a["table"] for a in bad[0]["alerts"]] == [UNENCODABLE] and "cannot be written" in bad[0]["error"]
    # the log names it visibly
    assert any("bad\\udcff" in r.getMessage() and "failed" in r.getMessage() for r in caplog.records)
