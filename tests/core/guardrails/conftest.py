"""The shop of tests/support/guarded_shop.py, in a fresh file per test."""

import pytest

from guarded_shop import make_shop


@pytest.fixture
def shop(tmp_path):
    path = tmp_path / "shop.duckdb"
    make_shop(path)
    return path
