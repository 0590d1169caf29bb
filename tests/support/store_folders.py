"""A table's run folders in a local store, read off the disk as a person would see them."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from cataloger_dagster.core.layout import _TS_RE


def run_folders(table_folder: Path) -> list[Path]:
    """The table's run folders, oldest first: its timelapse page, history cache and review log
    sit beside them."""
    return sorted(p for p in table_folder.iterdir() if p.is_dir() and _TS_RE.match(p.name))


def count_requests(monkeypatch, store_class, methods=("_read", "_list", "_list_after")) -> Counter:
    """The requests a store class makes from now on, by primitive (a resource is frozen: its
    class is patched, so every instance counts)."""
    calls: Counter = Counter()
    for method in methods:
        original = getattr(store_class, method)

        def counted(self, *args, _original=original, _method=method, **kwargs):
            calls[_method] += 1
            return _original(self, *args, **kwargs)
        monkeypatch.setattr(store_class, method, counted)
    return calls
