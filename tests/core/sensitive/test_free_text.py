from __future__ import annotations

from cataloger_dagster.core.sensitive.free_text import classes_in, is_free_text, occurrences


def test_classes_inside_a_sentence_are_validated():
    assert classes_in("write to ada@example.org or call +44 20 7946 0958") == {"email", "phone"}
    assert classes_in("card 4111 1111 1111 1111 on file") == {"payment_card"}
    assert classes_in("card 4111 1111 1111 1112 on file") == set()  # fails Luhn
    assert classes_in("key AKIAIOSFODNN7EXAMPLE leaked") == {"secret"}


def test_occurrences_count_values_and_free_text_is_wordy():
    texts = ["please mail ada@example.org now", "there is nothing to see here", "also write to bob@example.com here"]
    assert occurrences(texts) == {"email": 2}
    assert is_free_text(texts) and not is_free_text(["ABC-1", "ABC-2"])
