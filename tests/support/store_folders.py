"""A table's run folders in a local store, read off the disk as a person would see them."""

from __future__ import annotations

from pathlib import Path

from cataloger_dagster.core.layout import _TS_RE


def run_folders(table_folder: Path) -> list[Path]:
    """The table's run folders, oldest first: its timelapse page, history cache and review log
    sit beside them."""
    return sorted(p for p in table_folder.iterdir() if p.is_dir() and _TS_RE.match(p.name))
