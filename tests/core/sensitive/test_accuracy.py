"""The accuracy floors, on a small version of benchmarks/bench_sensitive_accuracy.py: recall on
generated columns of every class in several locales, precision on the real corpus's columns."""

from __future__ import annotations

import pytest

from personal_columns import COLUMNS, LOCALES
from sensitive_accuracy import catalogers, corpus_precision, recall



def test_recall_on_fifteen_classes_in_seven_locales():
    assert len(COLUMNS) >= 15 and len(LOCALES) >= 5
    found, misses = recall(catalogers, rows=40)
    assert found >= 0.95, misses


@pytest.mark.realdata
def test_precision_on_the_real_corpus_non_personal_columns(realdata_corpus):
    import realdata

    tables = realdata.corpus_tables()
    precision, columns, flagged = corpus_precision(catalogers, tables)
    assert columns > 500
    assert precision >= 0.98, flagged
