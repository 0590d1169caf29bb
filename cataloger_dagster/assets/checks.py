"""Asset checks on the per-table assets, evaluated per `tables` partition.

- `pass_rate_at_least_threshold` (investigations, ERROR): the investigations whose code ran
  and reached a verdict are at least CATALOGER_PASS_RATE_THRESHOLD of all of them.
- `no_high_severity_issues` (investigations, WARN): the table has no high-severity issue that its
  investigation did not refute (a refuted one is dismissed, and counts nowhere) and that a person did
  not dismiss or mark expected (those are set aside in `reviewed`; one worse since, or accepted, counts).
- `script_reproduces_evidence` (investigations, ERROR): the stored catalog_script.py, run
  alone in a fresh sandbox over a fresh snapshot of the table, prints the same verdict and
  evidence for every issue as the investigations recorded.

The checks run in the `catalog_table` job after their asset, and alone from the UI: they
read the partition's latest materialization and its run folder in the store, never a new one.

`partitions_def` on an asset check is a preview API in Dagster 1.13 (pinned exactly in
pyproject.toml); it is what makes the UI show results per partition, hence the warning is
silenced where the checks are defined and nowhere else.
"""

import json
import warnings
from typing import Any

import dagster as dg

from cataloger_dagster.assets.common import link, table_prefix
from cataloger_dagster.assets.investigations import investigations
from cataloger_dagster.assets.partitions import tables_partitions
from cataloger_dagster.assets.quality_issues import quality_issues
from cataloger_dagster.core.investigate.outcome import standing
from cataloger_dagster.core.layout import INVESTIGATIONS, ISSUES, SCRIPT
from cataloger_dagster.core.models import AnalysisResultModel, InvestigationsResult
from cataloger_dagster.core.results import latest_results, load_result
from cataloger_dagster.resources.database.snapshots import SNAPSHOT_URL
from cataloger_dagster.resources.database.resource import DatabaseResource
from cataloger_dagster.core.investigate.code import parse_records, referenced_tables
from cataloger_dagster.core.shown import markdown_text
from cataloger_dagster.resources.sandbox import SandboxResource
from cataloger_dagster.resources.sandbox.pool import SandboxPool
from cataloger_dagster.resources.store import CatalogStore
from cataloger_dagster.settings.model import CatalogerSettings, default, variable

# the whole script is one cell: give it the time of many
SCRIPT_TIMEOUT_FACTOR = 10


def partitioned_check(**kwargs):
    def decorate(fn):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", dg.PreviewWarning)
            return dg.asset_check(partitions_def=tables_partitions, **kwargs)(fn)

    return decorate


def latest_run_folder(instance: dg.DagsterInstance, table: str) -> str | None:
    """The store folder of the partition's latest investigations materialization."""
    found = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=investigations.key, asset_partitions=[table]), limit=1
    ).records
    if not found or found[0].asset_materialization is None:
        return None
    entry = found[0].asset_materialization.metadata.get("run_folder")
    return getattr(entry, "value", None)


def build_pass_rate_check(settings: CatalogerSettings) -> dg.AssetChecksDefinition:
    threshold = settings.pass_rate_threshold

    @partitioned_check(
        name="pass_rate_at_least_threshold",
        asset=investigations,
        description=f"At least {variable('pass_rate_threshold')} (default {default('pass_rate_threshold')}) "
        "of the investigations ran and reached a verdict.",
    )
    def pass_rate_at_least_threshold(
        context: dg.AssetCheckExecutionContext, investigations: InvestigationsResult
    ) -> dg.AssetCheckResult:
        return pass_rate_result(investigations, threshold)

    return pass_rate_at_least_threshold


def pass_rate_result(investigations: InvestigationsResult, threshold: float) -> dg.AssetCheckResult:
    rate = investigations.pass_rate
    failed = [i.issue_id for i in investigations.investigations if not (i.success and i.verdict)]
    return dg.AssetCheckResult(
        passed=rate is None or rate >= threshold,
        severity=dg.AssetCheckSeverity.ERROR,
        description=(
            "no issue to investigate"
            if rate is None
            else f"pass rate {rate:.0%} {'>=' if rate >= threshold else '<'} threshold {threshold:.0%}"
        ),
        metadata={
            "pass_rate": rate if rate is not None else 1.0,
            "threshold": threshold,
            "investigations": len(investigations.investigations),
            "without_verdict": ", ".join(failed),
        },
    )


# on investigations, not quality_issues: whether a high-severity issue stands is known once it is investigated
@partitioned_check(
    asset=investigations,
    additional_ins={"quality_issues": dg.AssetIn(key=quality_issues.key)},
    description="The table has no high-severity data-quality issue that its investigation did not "
    "refute and that no reviewer dismissed or marked expected.",
)
def no_high_severity_issues(
    context: dg.AssetCheckExecutionContext, quality_issues: AnalysisResultModel, investigations: InvestigationsResult
) -> dg.AssetCheckResult:
    # an issue its investigation refuted is dismissed, not a finding; one a person dismissed or marked
    # expected is not among the issues at all (quality_issues set it aside in `reviewed`)
    high = [i for i in standing(quality_issues, investigations.investigations).issues if i.severity == "high"]
    set_aside = [i for i in quality_issues.reviewed if i.severity == "high"]
    return dg.AssetCheckResult(
        passed=not high,
        severity=dg.AssetCheckSeverity.WARN,
        description=f"{len(high)} high-severity issues" if high else "no high-severity issue",
        metadata={
            "high": len(high),
            "high_set_aside_by_review": len(set_aside),
            "high_issues": dg.MetadataValue.md(
                "\n".join(f"- {markdown_text(i.id)}: {markdown_text(i.description)}" for i in high) or "none"
            ),
        },
    )


def issues_for(store: CatalogStore, prefix: str, timestamp: str) -> AnalysisResultModel | None:
    """The issues the investigations of `timestamp` answered: that run's, or the latest before it
    (a run that rematerialized only `investigations` has no issues.json of its own)."""
    own = load_result(store, prefix, timestamp, ISSUES, AnalysisResultModel)
    if own is not None:
        return own
    earlier = latest_results(store, prefix, ISSUES, before=timestamp, limit=1)
    return earlier[0][1] if earlier else None


def _comparable(value: Any) -> Any:
    # the sandbox prints evidence with json.dumps(default=str); compare in that form
    return json.loads(json.dumps(value, default=str))


def compare_evidence(expected: InvestigationsResult, printed: dict[str, dict]) -> list[str]:
    """One line per issue whose rerun differs from the recorded investigation."""
    problems = []
    for inv in expected.investigations:
        if not (inv.success and inv.verdict):
            continue  # nothing was recorded to reproduce
        got = printed.get(inv.issue_id)
        if got is None:
            problems.append(f"{inv.issue_id}: the script printed no record")
        elif got.get("verdict") != inv.verdict:
            problems.append(f"{inv.issue_id}: verdict {got.get('verdict')!r}, recorded {inv.verdict!r}")
        elif _comparable(got.get("evidence")) != _comparable(inv.evidence):
            problems.append(f"{inv.issue_id}: evidence {got.get('evidence')!r}, recorded {inv.evidence!r}")
    return problems


@partitioned_check(
    asset=investigations,
    description="The stored catalog_script.py, rerun alone in a fresh sandbox over a fresh snapshot, "
    "prints the verdict and evidence recorded for every issue.",
)
def script_reproduces_evidence(
    context: dg.AssetCheckExecutionContext,
    database: DatabaseResource,
    store: CatalogStore,
    sandbox: SandboxResource,
    sandbox_pool: dg.ResourceParam[SandboxPool],
) -> dg.AssetCheckResult:
    table = context.partition_key
    prefix = table_prefix(database, table)
    timestamp = latest_run_folder(context.instance, table)
    script = store.read_script(prefix, timestamp, SCRIPT) if timestamp else None
    recorded = load_result(store, prefix, timestamp, INVESTIGATIONS, InvestigationsResult) if timestamp else None
    issues = issues_for(store, prefix, timestamp) if timestamp else None
    if script is None or recorded is None or issues is None:
        return dg.AssetCheckResult(
            passed=False,
            description=f"{table}: no stored script and investigations to check (run folder {timestamp!r}); "
            "materialize the table's partition first",
        )
    expected, found = recorded, issues.issues
    # a sandbox from the pool is as fresh as a new one: cleaned, a worker nobody ran a cell in
    with sandbox.session(env={"DB_CONNECTION_STRING": SNAPSHOT_URL}, pool=sandbox_pool) as runtime:
        database.write_snapshot(table, runtime.data_folder, references=referenced_tables(found))
        ran = runtime.execute(script, timeout_s=sandbox.timeout_s * SCRIPT_TIMEOUT_FACTOR)
    printed = parse_records(ran.stdout)
    problems = (
        []
        if ran.ok
        else [f"the script failed: {ran.error.type}: {ran.error.message}" if ran.error else "the script failed"]
    )
    # the recorded evidence was stored as the sensitive-values policy says: the rerun's is compared,
    # and shown in the check's metadata, the same way, never in clear
    policy = store.value_policy(database.database_name)
    problems += compare_evidence(expected, {k: policy.value(v) for k, v in printed.items()})
    answered = sum(1 for i in expected.investigations if i.success and i.verdict)
    return dg.AssetCheckResult(
        passed=not problems,
        severity=dg.AssetCheckSeverity.ERROR,
        description=(
            f"{answered} verdicts and their evidence reproduced"
            if not problems
            else f"{len(problems)} differences; the table may have changed since {timestamp}"
        ),
        metadata={
            "run_folder": timestamp,
            "script": link(store.uri(prefix, timestamp, SCRIPT)),
            "records": len(printed),
            "differences": dg.MetadataValue.md("\n".join(f"- {markdown_text(p)}" for p in problems) or "none"),
            "seconds": round(ran.duration_ms / 1000, 3),
        },
    )


def build_asset_checks(settings: CatalogerSettings) -> list[dg.AssetChecksDefinition]:
    return [build_pass_rate_check(settings), no_high_severity_issues, script_reproduces_evidence]
