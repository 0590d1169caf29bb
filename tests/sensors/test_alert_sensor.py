"""alert_sensor against a real (temporary) Dagster instance and a real store folder, ticked as the
daemon ticks it, delivering to local receivers (tests/support/receivers.py).

Most tests materialize a stand-in `catalog_page` that writes the issues given in its config into
the table's run folder, as quality_issues does, and records the metadata the real asset records;
the last test runs the real assets end to end.
"""

import json
from pathlib import Path
from urllib.parse import unquote, urlsplit

import dagster as dg
import pytest

from cataloger_dagster.assets.common import TableRun
from cataloger_dagster.assets.partitions import tables_partitions
from cataloger_dagster.core.layout import ALERTS, ISSUES
from cataloger_dagster.definitions import TABLE_ASSETS, defs
from cataloger_dagster.resources.database.resource import DatabaseResource
from cataloger_dagster.resources.store import CatalogStore, store_from_url
from cataloger_dagster.sensors.alert_sensor import BadCursor, build_alert_sensor, read_cursor
from cataloger_dagster.settings.model import load_settings
from cataloger_dagster.settings.factories import notifier_resource, resources
from tests.support.receivers import http_receiver, smtp_receiver
from tests.support.shop import make_shop

pytestmark = pytest.mark.filterwarnings("error::DeprecationWarning")

SECRET_PATH = "/services/T0SECRET/B0SECRET/xoxb-hush-hush-42"


class StandInConfig(dg.Config):
    issues: str = "[]"   # JSON: the run's issues


@dg.asset(name="catalog_page", partitions_def=tables_partitions)
def stand_in(context: dg.AssetExecutionContext, config: StandInConfig, database: DatabaseResource,
             store: CatalogStore) -> dg.MaterializeResult:
    folder = TableRun.open(context, database, store, context.partition_key)
    folder.write_json(ISSUES, {"issues": json.loads(config.issues), "summary": "", "completedAt": "now"})
    return dg.MaterializeResult(metadata={"run_folder": folder.timestamp})


def issue(id: str, severity: str = "high", type: str = "missing_values", review: dict | None = None) -> dict:
    return {"id": id, "type": type, "severity": severity, "description": f"{id} <b>looks</b> wrong",
            "affectedColumns": ["page"], "suggestedAction": "fix it", "category": "quick_fixes",
            "affectedRows": 10, "review": review}


def worse(rows_then: int, rows_now: int) -> dict:
    return {"state": "worse_since_dismissed", "verdict": "dismiss", "reviewer": "ann", "at": "2026-11-01T00:00:00Z",
            "reviewed_id": "x", "rows_then": rows_then, "rows_now": rows_now}


class Catalog:
    """A database, a store folder, an instance; materializes stand-in runs and ticks the sensor."""

    def __init__(self, tmp_path: Path, instance: dg.DagsterInstance, monkeypatch):
        self.db = make_shop(tmp_path / "shop.duckdb")
        self.store_dir = tmp_path / "store"
        self.instance = instance
        self.monkeypatch = monkeypatch
        self.cursor: str | None = None
        monkeypatch.setenv("CATALOGER_DATABASE", f"duckdb://{self.db}")
        monkeypatch.setenv("CATALOGER_STORE", str(self.store_dir))
        instance.add_dynamic_partitions("tables", ["events", "customers"])

    def run(self, table: str, *issues: dict) -> dg.ExecuteInProcessResult:
        res = resources(load_settings(), sandbox="local")
        result = dg.materialize([stand_in], partition_key=table, instance=self.instance, resources=res,
                                run_config={"ops": {"catalog_page": {"config": {"issues": json.dumps(issues)}}}})
        assert result.success
        return result

    def tick(self, **env: str):
        for name, value in env.items():
            self.monkeypatch.setenv(name, value)
        settings = load_settings()
        # the resources are built as the daemon builds them, within the tick
        with dg.build_sensor_context(instance=self.instance, cursor=self.cursor,
                                     resources={k: v for k, v in resources(settings).items()
                                                if k in ("store", "database", "notifier")}) as context:
            data = build_alert_sensor(settings).evaluate_tick(context)
        self.cursor = data.cursor
        return data

    @property
    def store(self) -> CatalogStore:
        return store_from_url(str(self.store_dir))

    def log(self) -> list[dict]:
        return [json.loads(data) for _, data in self.store.read_entries(f"shop.duckdb/{ALERTS}")]


@pytest.fixture
def catalog(tmp_path, monkeypatch):
    for name in ("CATALOGER_TABLE_OWNERS", "CATALOGER_ALERT_NOTIFIER", "CATALOGER_ALERT_WEBHOOK_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CATALOGER_ALERT_BACKOFF_S", "0")
    with dg.instance_for_test() as instance:
        yield Catalog(tmp_path, instance, monkeypatch)


def webhook(receiver) -> dict:
    return {"CATALOGER_ALERT_NOTIFIER": "webhook", "CATALOGER_ALERT_WEBHOOK_URL": receiver.url}


def local(url: str) -> Path:
    return Path(unquote(urlsplit(url).path))


def alerts_in(payload: dict) -> list[dict]:
    return [a for o in payload["owners"] for t in o["tables"] for a in t["alerts"]]


def test_one_grouped_message_per_run_and_never_the_same_alert_twice(catalog):
    with http_receiver() as receiver:
        run = catalog.run("events", issue("missing:page"), issue("dup:rows", severity="medium"),
                          issue("volume", severity="medium", type="volume_anomaly"))
        catalog.tick(**webhook(receiver))
        assert len(receiver.received) == 1
        message = receiver.received[0]
        assert message["run_id"] == run.run_id
        found = {a["issue_id"]: a for a in alerts_in(message)}
        assert set(found) == {"missing:page", "volume"}  # a medium issue of no history type alerts nobody
        assert found["missing:page"]["kind"] == "new_high" and found["volume"]["kind"] == "history"
        page = found["missing:page"]["page"]
        assert page.startswith("file://") and page.endswith("/catalog.html#issue-1")
        assert local(found["volume"]["evidence"]).is_file()  # issues.json

        # a second tick, then a second run that raises the same issues and one more: only the new one
        catalog.tick()
        assert len(receiver.received) == 1
        catalog.run("events", issue("missing:page"), issue("volume", severity="medium", type="volume_anomaly"),
                    issue("orphans:customer_id"))
        catalog.tick()
        assert [a["issue_id"] for a in alerts_in(receiver.received[1])] == ["orphans:customer_id"]

        # resolved, then back: it alerts again
        catalog.run("events")
        catalog.tick()
        catalog.run("events", issue("missing:page"))
        catalog.tick()
        assert [a["issue_id"] for a in alerts_in(receiver.received[2])] == ["missing:page"]
    assert [e["ok"] for e in catalog.log()] == [True, True, True]


def test_a_regression_alerts_and_alerts_again_when_worse_again(catalog):
    with http_receiver() as receiver:
        catalog.run("events", issue("dup:rows", severity="low", review=worse(10, 40)))
        catalog.tick(**webhook(receiver))
        (alert,) = alerts_in(receiver.received[0])
        assert alert["kind"] == "regression" and "worse since dismissed" in alert["detail"]
        assert "10 -> 40 rows" in alert["detail"]
        catalog.run("events", issue("dup:rows", severity="low", review=worse(10, 40)))
        catalog.tick()
        assert len(receiver.received) == 1
        catalog.run("events", issue("dup:rows", severity="low", review=worse(10, 90)))
        catalog.tick()
        assert "10 -> 90 rows" in alerts_in(receiver.received[1])[0]["detail"]


def test_grouped_by_owner_and_slack_payload(catalog):
    owners = json.dumps({"events": "team-web", "*": "team-data"})
    with http_receiver(secret_path=SECRET_PATH) as receiver:
        catalog.run("events", issue("missing:page"))
        catalog.run("customers", issue("dup:<@channel>"))
        catalog.tick(CATALOGER_ALERT_NOTIFIER="slack", CATALOGER_ALERT_WEBHOOK_URL=receiver.url,
                     CATALOGER_TABLE_OWNERS=owners)
    assert len(receiver.received) == 2  # one per run
    events, customers = receiver.received
    assert events["text"] == "cataloger: 1 alert on events"
    body = "\n".join(b["text"]["text"] for b in events["blocks"] if b["type"] == "section")
    assert "owner team-web" in body and "<file://" in body and "|page>" in body and "|evidence>" in body
    shown = "\n".join(b["text"]["text"] for b in customers["blocks"] if b["type"] == "section")
    assert "owner team-data" in shown
    assert "<@channel>" not in shown and "&lt;@channel&gt;" in shown  # a name never mentions anyone


def test_a_receiver_that_fails_first_gets_it_on_a_retry(catalog):
    with http_receiver(fail_first=2) as receiver:
        catalog.run("events", issue("missing:page"))
        catalog.tick(**webhook(receiver))
        assert receiver.tries == 3 and len(receiver.received) == 1
    (entry,) = catalog.log()
    assert entry["ok"] is True and entry["attempts"] == 3


def test_a_receiver_that_always_fails_is_recorded_and_the_run_is_unaffected(catalog, capfd):
    with http_receiver(fail_first=1000, secret_path=SECRET_PATH) as receiver:
        run = catalog.run("events", issue("missing:page"))
        data = catalog.tick(**webhook(receiver), CATALOGER_ALERT_ATTEMPTS="2")
        assert receiver.tries == 2 and receiver.received == []
        assert "could not be delivered" in data.skip_message
        (entry,) = catalog.log()
        assert entry["ok"] is False and entry["attempts"] == 2 and "HTTP Error 500" in entry["error"]
        assert catalog.instance.get_run_by_id(run.run_id).status == dg.DagsterRunStatus.SUCCESS
        assert "failed after 2 tries" in capfd.readouterr().err
        # not sent, so not forgotten: the table's next run raises it again
        catalog.run("events", issue("missing:page"))
        receiver.fail_first = 0
        catalog.tick()
        assert [a["issue_id"] for a in alerts_in(receiver.received[0])] == ["missing:page"]
    assert [e["ok"] for e in catalog.log()] == [False, True]


def everything_stored(catalog: Catalog, capfd) -> str:
    """Every text this test could have left a secret in: the store, Dagster's storage, the output."""
    texts = [p.read_bytes().decode("utf-8", "replace") for p in catalog.store_dir.rglob("*") if p.is_file()]
    for run in catalog.instance.get_runs():
        texts.append(repr(catalog.instance.get_job_snapshot(run.job_snapshot_id)))
        texts += [repr(e) for e in catalog.instance.all_logs(run.run_id)]
    texts.append(catalog.cursor or "")
    out = capfd.readouterr()
    return "\n".join(texts + [out.out, out.err])


def test_no_secret_in_logs_store_or_dagster_storage(catalog, capfd):
    with http_receiver(fail_first=1000, secret_path=SECRET_PATH) as receiver:
        catalog.run("events", issue("missing:page"))
        catalog.tick(**webhook(receiver), CATALOGER_ALERT_ATTEMPTS="1")
        assert receiver.tries == 1
    with smtp_receiver() as smtp:
        catalog.run("events", issue("orphans:customer_id"))
        catalog.tick(CATALOGER_ALERT_NOTIFIER="email", CATALOGER_ALERT_SMTP_HOST="127.0.0.1",
                     CATALOGER_ALERT_SMTP_PORT="1", CATALOGER_ALERT_SMTP_USER="bot",
                     CATALOGER_ALERT_SMTP_PASSWORD="pw-S3CRET-smtp", CATALOGER_ALERT_EMAIL_TO="ops@example.org")
        assert smtp.messages == []  # port 1: nobody there, the delivery failed
    stored = everything_stored(catalog, capfd)
    assert [e["ok"] for e in catalog.log()] == [False, False]
    assert "missing:page" in stored  # what was looked at is there...
    assert SECRET_PATH not in stored and "T0SECRET" not in stored and "pw-S3CRET-smtp" not in stored
    resource = notifier_resource(load_settings())
    assert "pw-S3CRET-smtp" not in repr(resource) and "CATALOGER_ALERT_SMTP_PASSWORD" in repr(resource)


def test_email_through_a_local_smtp_server(catalog):
    with smtp_receiver() as smtp:
        catalog.run("events", issue("missing:page"))
        catalog.tick(CATALOGER_ALERT_NOTIFIER="email", CATALOGER_ALERT_SMTP_HOST=smtp.host,
                     CATALOGER_ALERT_SMTP_PORT=str(smtp.port), CATALOGER_ALERT_EMAIL_TO="a@example.org, b@example.org",
                     CATALOGER_TABLE_OWNERS='{"events": "team-web"}')
    (mail,) = smtp.messages
    assert mail["Subject"] == "cataloger: 1 alert on events"
    assert mail["To"] == "a@example.org, b@example.org"
    body = mail.get_payload(decode=True).decode()
    assert "Owner: team-web" in body and "missing:page" in body and "catalog.html#issue-1" in body


def test_alerts_off_by_default_say_so_and_send_nothing(catalog, capfd):
    catalog.run("events", issue("missing:page"))
    catalog.tick()
    assert "alerts are off (CATALOGER_ALERT_NOTIFIER=none)" in capfd.readouterr().err
    assert catalog.log() == []


def test_corrupt_cursor_is_a_clear_error(catalog):
    catalog.cursor = '{"after": "x"}'
    with pytest.raises(BadCursor, match="reset the sensor's cursor"):
        catalog.tick()
    assert read_cursor(None) == (None, {})


def test_registered_and_running_by_default():
    sensor = defs.resolve_sensor_def("alert_sensor")
    assert sensor.default_status == dg.DefaultSensorStatus.RUNNING
    assert {"store", "database", "notifier"} <= sensor.required_resource_keys


@pytest.mark.slow
def test_end_to_end_the_real_assets_alert_once(tmp_path, local_sandbox, monkeypatch):
    """The real catalog run of the shop table (high-severity findings), then two ticks."""
    db = make_shop(tmp_path / "shop.duckdb")
    store = tmp_path / "store"
    monkeypatch.setenv("CATALOGER_DATABASE", f"duckdb://{db}")
    monkeypatch.setenv("CATALOGER_ALERT_BACKOFF_S", "0")
    with http_receiver() as receiver, dg.instance_for_test() as instance:
        monkeypatch.setenv("CATALOGER_ALERT_NOTIFIER", "webhook")
        monkeypatch.setenv("CATALOGER_ALERT_WEBHOOK_URL", receiver.url)
        settings = load_settings(store=str(store))
        res = resources(settings, sandbox="local")
        instance.add_dynamic_partitions("tables", ["events"])
        result = dg.materialize(TABLE_ASSETS, partition_key="events", instance=instance, resources=res)
        found = result.output_for_node("quality_issues")
        refuted = {i.issue_id for i in result.output_for_node("investigations").investigations
                   if i.verdict == "refuted"}
        expected = {i.id for i in found.issues if i.severity == "high" and i.id not in refuted}
        assert expected, "the shop table has high-severity issues"
        sensor = build_alert_sensor(settings)
        sensor_resources = {k: res[k] for k in ("store", "database", "notifier")}
        cursor = None
        for _ in range(2):
            with dg.build_sensor_context(instance=instance, cursor=cursor, resources=sensor_resources) as context:
                data = sensor.evaluate_tick(context)
            cursor = data.cursor
        assert len(receiver.received) == 1
        assert {a["issue_id"] for a in alerts_in(receiver.received[0])} == expected
        page = local(alerts_in(receiver.received[0])[0]["page"])
        anchor = alerts_in(receiver.received[0])[0]["page"].split("#")[1]
        html = page.read_text()
        assert f'id="{anchor}" data-issue-id="{alerts_in(receiver.received[0])[0]["issue_id"]}"' in html
