"""The settings' tests: each starts from no CATALOGER_* variable and no .env file."""

from __future__ import annotations

import os

import pytest


@pytest.fixture
def clean_env(monkeypatch, tmp_path):
    """No CATALOGER_* variable and no .env: the embedded defaults."""
    for name in list(os.environ):
        # CATALOGER_UPDATE_DOCS is test_documentation.py's switch (regenerate the docs), not a setting
        if name.startswith("CATALOGER_") and not name.startswith("CATALOGER_TEST_") and name != "CATALOGER_UPDATE_DOCS":
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    return monkeypatch
