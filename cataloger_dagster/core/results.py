"""A table run's results as the store keeps them: one JSON file each, read and written here alone,
as the pydantic models of `core.models`.

Every reader (the assets through Dagster's IO manager, history, the MCP server, the CLI, the
summaries) goes through `load_result`, `latest_results` or `load_run`; nothing else parses a
result's JSON.  A result written before a field was added reads with that field's default.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, Optional, TypeVar, overload

from pydantic import BaseModel, ValidationError

from cataloger_dagster.core.layout import (
    INVESTIGATIONS,
    ISSUES,
    PROFILE,
    SCRIPT,
    UNDERSTANDING,
    metrics_filename,
)
from cataloger_dagster.core.models import (
    AnalysisResultModel,
    DatasetUnderstandingModel,
    InvestigationsResult,
    TableProfile,
)
from cataloger_dagster.core.store import Store

M = TypeVar("M", bound=BaseModel)


class StoredUnderstanding(DatasetUnderstandingModel):
    """understanding.json: the understanding and the key it is reused under (fingerprint, agent,
    prompt version); empty in a result stored without one."""

    cache_key: str = ""


class ScriptMetrics(BaseModel):
    """The numbers stored beside a run's catalog script (`outcome.script_metrics`): what the
    history and the listings read of them.  Other keys are kept as they are."""

    # strict: a number written as text, or a bool for a number, reads as absent (hand-edited metrics)
    model_config = {"extra": "allow", "strict": True}

    pass_rate: Optional[float] = None
    cells: Optional[int] = None
    seconds: Optional[float] = None
    explored: Optional[bool] = None
    investigations: Optional[int] = None
    based_on: Optional[str] = None
    based_on_table: Optional[str] = None
    relearned: Optional[list[str]] = None
    schema_hash: Optional[str] = None


def script_metrics(data: Any) -> ScriptMetrics:
    """Metrics as stored beside a script (the catalog's, or a script's brought from elsewhere): a
    known key holding a value of another type reads as absent, never failing a listing or a run."""
    if not isinstance(data, dict):
        return ScriptMetrics()
    try:
        return ScriptMetrics.model_validate(data)
    except ValidationError as e:
        bad = {err["loc"][0] for err in e.errors() if err.get("loc")}
        return ScriptMetrics.model_validate({k: v for k, v in data.items() if k not in bad})


# each result file and its model; the asset whose output it is names the file (`ASSET_RESULTS`)
RESULT_MODELS: dict[str, type[BaseModel]] = {
    PROFILE: TableProfile,
    UNDERSTANDING: StoredUnderstanding,
    ISSUES: AnalysisResultModel,
    INVESTIGATIONS: InvestigationsResult,
}
ASSET_RESULTS: dict[str, str] = {
    "table_profile": PROFILE,
    "table_understanding": UNDERSTANDING,
    "quality_issues": ISSUES,
    "investigations": INVESTIGATIONS,
}


class ResultError(ValueError):
    """A stored result that its model cannot read."""


@overload
def load_result(store: Store, prefix: str, timestamp: str, filename: str, model: type[M]) -> M | None: ...
@overload
def load_result(store: Store, prefix: str, timestamp: str, filename: str) -> Any: ...
def load_result(store: Store, prefix: str, timestamp: str, filename: str, model: type[BaseModel] | None = None) -> Any:
    """The result ``filename`` of the run folder ``timestamp``, as its model; None when absent."""
    return _validated(store, prefix, timestamp, filename, store.read_json(prefix, timestamp, filename), model)


def _validated(
    store: Store, prefix: str, timestamp: str, filename: str, data: Any, model: type[BaseModel] | None
) -> Any:
    if data is None:
        return None
    model = model or RESULT_MODELS[filename]
    try:
        return model.model_validate(data)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "the file"
        raise ResultError(
            f"{prefix}/{timestamp}/{filename} in {store.describe()} is not a stored {model.__name__} "
            f"({where}: {first.get('msg')}); rerun the table to write it again"
        ) from None


def save_result(store: Store, prefix: str, timestamp: str, filename: str, result: BaseModel) -> str:
    """Writes ``result`` as the run folder's ``filename`` (never replacing one); its location."""
    expected = RESULT_MODELS[filename]
    # an understanding without its reuse key is stored with an empty one
    if not isinstance(result, DatasetUnderstandingModel if expected is StoredUnderstanding else expected):
        raise TypeError(f"{filename} holds a {expected.__name__}, not a {type(result).__name__}")
    return store.write_json(prefix, timestamp, filename, result)


def latest_results(
    store: Store,
    prefix: str,
    filename: str,
    *,
    before: str | None = None,
    limit: int = 10,
    runs: list[str] | None = None,
) -> list[tuple[str, Any]]:
    """(timestamp, result) of the latest runs holding ``filename``, newest first; ``runs``: the
    table's run folders, if listed already; ``before``: only runs older than that one."""
    found: list[tuple[str, Any]] = []
    for ts in reversed(store.list_runs(prefix) if runs is None else runs):
        if before is not None and ts >= before:
            continue
        data = store.read_json(prefix, ts, filename)
        if data is not None:
            found.append((ts, _validated(store, prefix, ts, filename, data, None)))
            if len(found) >= limit:
                break
    return found


def load_metrics(store: Store, prefix: str, timestamp: str) -> ScriptMetrics | None:
    """The metrics of the run's catalog script, if it stored one."""
    data = store.read_json(prefix, timestamp, metrics_filename(SCRIPT))
    return script_metrics(data) if isinstance(data, dict) else None


@dataclass(frozen=True)
class StoredRun:
    """The results of one run folder, each read on first use; None for those the run did not
    get to."""

    store: Store
    prefix: str
    timestamp: str

    @cached_property
    def profile(self) -> TableProfile | None:
        return load_result(self.store, self.prefix, self.timestamp, PROFILE, TableProfile)

    @cached_property
    def understanding(self) -> StoredUnderstanding | None:
        return load_result(self.store, self.prefix, self.timestamp, UNDERSTANDING, StoredUnderstanding)

    @cached_property
    def issues(self) -> AnalysisResultModel | None:
        return load_result(self.store, self.prefix, self.timestamp, ISSUES, AnalysisResultModel)

    @cached_property
    def investigations(self) -> InvestigationsResult | None:
        return load_result(self.store, self.prefix, self.timestamp, INVESTIGATIONS, InvestigationsResult)

    @cached_property
    def metrics(self) -> ScriptMetrics | None:
        return load_metrics(self.store, self.prefix, self.timestamp)


def load_run(store: Store, prefix: str, timestamp: str) -> StoredRun:
    """The results of the run folder ``timestamp`` of the table at ``prefix``."""
    return StoredRun(store, prefix, timestamp)
