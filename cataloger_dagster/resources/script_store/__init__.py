"""The script store resource: every run's scripts, JSON results and HTML pages.

`base` holds the logic over a handful of storage primitives; each backend
implements only those primitives in a file of its own.
"""

from cataloger_dagster.resources.script_store.base import (  # noqa: F401
    HASH_MARK,
    INDEX_FILE,
    INDEX_HISTORY,
    LATEST_WINDOW,
    MAX_SEGMENT,
    RUN_FILE,
    ArtifactExistsError,
    LocalScriptStore,
    S3ScriptStore,
    ScriptRecord,
    ScriptStore,
    ScriptStoreError,
    __all__,
    format_timestamp,
    metrics_filename,
    name_of_folder,
    new_timestamp,
    normalize_timestamp,
    script_rank,
    script_store_from_url,
    store_name,
    table_prefix,
)
