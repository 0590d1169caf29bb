"""The store's layout: artifact names, prefixes and timestamps, without any store."""

from datetime import datetime, timezone

import pytest

from cataloger_dagster.core import layout


def test_artifact_names_are_the_stores_public_names():
    assert (layout.PROFILE, layout.UNDERSTANDING, layout.ISSUES, layout.INVESTIGATIONS) == (
        "profile.json", "understanding.json", "issues.json", "investigations.json")
    assert (layout.SCRIPT, layout.SUMMARY_SCRIPT) == ("catalog_script.py", "summary_script.py")
    assert (layout.CATALOG_PAGE, layout.RECENT_SUMMARY) == ("catalog.html", "recent_summary.html")
    assert (layout.RUN_FILE, layout.INDEX_FILE, layout.INDEX_HISTORY) == ("run.json", "index.html", "index_history")
    assert layout.metrics_filename(layout.SCRIPT) == "catalog_script.metrics.json"


def test_table_prefix_maps_names_to_one_folder_each():
    assert layout.table_prefix("shop", "orders") == "shop/orders"
    assert layout.table_prefix("my db", "a/b") == "my~20db/a~2Fb"
    assert layout.table_prefix("shop", "index.html") == "shop/index~2Ehtml"
    for name in ("orders", "my db", "a/b", "..", "index.html", "é" * 10):
        assert layout.name_of_folder(layout.store_name(name)) == name
    long = layout.store_name("x" * 300)
    assert len(long) <= layout.MAX_SEGMENT and layout.HASH_MARK in long
    assert layout.name_of_folder(long) is None


def test_timestamps_sort_as_text():
    moment = datetime(2026, 11, 22, 10, 0, 0, 123456, tzinfo=timezone.utc)
    assert layout.format_timestamp(moment) == "2026-11-22T10:00:00.123456Z"
    assert layout.normalize_timestamp("2024-01-15T10:00:00Z") == "2024-01-15T10:00:00.000000Z"
    assert layout.normalize_timestamp("2024-01-15T10:00:00Z") < layout.normalize_timestamp("2024-01-15T10:00:00.5Z")
    with pytest.raises(ValueError, match="no time zone"):
        layout.normalize_timestamp("2024-01-15T10:00:00")
    stamp = layout.new_timestamp()
    assert layout.normalize_timestamp(stamp) == stamp


def test_fix_scripts_live_in_the_fixes_folder_of_a_run_whatever_the_issue_id():
    assert layout.fix_filename("orders_outliers_total", "cap") == "fixes/orders_outliers_total.cap.sql"
    hostile = layout.fix_filename("../x/\n\x00", "set_null")
    assert hostile.startswith("fixes/") and hostile.count("/") == 1 and "\n" not in hostile
    assert layout._check_filename(hostile) == hostile
    long = layout.fix_filename("x" * 500, "keep_latest")
    assert len(long.split("/")[1]) <= layout.MAX_SEGMENT + 4
    for bad in ("other/x.sql", "fixes/.hidden", "fixes/a/b.sql", "/x"):
        with pytest.raises(ValueError):
            layout._check_filename(bad)


def test_a_table_named_like_a_reserved_folder_gets_a_folder_of_its_own():
    for reserved in (layout.CAPSULES, layout.ALERTS, layout.DATABASE_RUNS, layout.TABLE_FACTS, layout.REVIEW_LOG,
                     layout.CATALOG_FILE):
        assert layout.store_name(reserved) != reserved
        assert layout.name_of_folder(layout.store_name(reserved)) == reserved
        assert layout.name_of_folder(reserved) is None
