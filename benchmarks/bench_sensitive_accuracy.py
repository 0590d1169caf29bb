"""The personal-data classifier's accuracy, beside Presidio's analyzer alone on the same columns.

    .venv/bin/python benchmarks/bench_sensitive_accuracy.py [--rows 200]

Recall: generated columns of 15 classes in 7 locales (tests/support/personal_columns.py, Faker
seeded), named as people name them, and again named c1, c2... (the values alone must tell).
Precision: the real corpus's columns (tests/support/realdata; `make realdata` first) that hold no
personal data, the share left without a class.  Each column is read as the profile reads it: its
first 200 values.

Presidio (presidio-analyzer, the bench extra) runs its predefined pattern recognizers directly on
each value: its analyzer engine needs a spaCy model, which no package registry ships, so the
recognizers that need one (PERSON, LOCATION, NRP) are not in the comparison, and Presidio finds no
person name, address, postcode, date of birth, username or password.  A column gets an entity
when at least half of its values yield it with a score of at least 0.5; the entities are mapped
to the catalog's classes.
"""

from __future__ import annotations

import argparse
import sys
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "support"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from report import machine  # noqa: E402

import sensitive_accuracy as accuracy  # noqa: E402
from cataloger_dagster.core.sensitive.classifier import ColumnValues  # noqa: E402

ENTITIES = {
    "EMAIL_ADDRESS": "email",
    "PHONE_NUMBER": "phone",
    "CREDIT_CARD": "payment_card",
    "IBAN_CODE": "iban",
    "IP_ADDRESS": "ip_address",
    "MAC_ADDRESS": "mac_address",
    "CRYPTO": "crypto_wallet",
    "US_SSN": "national_id",
    "UK_NINO": "national_id",
    "ES_NIF": "national_id",
    "ES_NIE": "national_id",
    "IT_FISCAL_CODE": "national_id",
    "DE_TAX_ID": "national_id",
    "FI_PERSONAL_IDENTITY_CODE": "national_id",
    "PL_PESEL": "national_id",
    "SE_PERSONNUMMER": "national_id",
    "URL": None,
    "DATE_TIME": None,
}
MIN_SHARE, MIN_SCORE = 0.5, 0.5


def presidio_recognizers() -> list:
    import tldextract

    from presidio_analyzer import PatternRecognizer, RecognizerRegistry
    from presidio_analyzer.predefined_recognizers.generic import email_recognizer

    # the e-mail recognizer checks the domain against the public suffix list: the copy tldextract
    # ships, never a download
    email_recognizer.tldextract = types.SimpleNamespace(extract=tldextract.TLDExtract(suffix_list_urls=()))
    registry = RecognizerRegistry(supported_languages=["en", "de", "es", "it", "fr", "nl", "pl", "fi", "sv"])
    registry.load_predefined_recognizers(languages=["en", "de", "es", "it", "fr", "nl", "pl", "fi", "sv"])
    return [r for r in registry.recognizers if isinstance(r, PatternRecognizer)]


def presidio(recognizers: list) -> accuracy.Classifier:
    def classify(columns: list[ColumnValues], table: str) -> dict[str, set[str]]:
        found: dict[str, set[str]] = {}
        for col in columns:
            counts: dict[str, int] = {}
            for value in col.values:
                text = str(value)
                entities = set()
                for r in recognizers:
                    for res in r.analyze(text, r.supported_entities):
                        if res.score >= MIN_SCORE:
                            entities.add(res.entity_type)
                for e in entities:
                    counts[e] = counts.get(e, 0) + 1
            classes = {ENTITIES.get(e, e.lower()) for e, n in counts.items() if col.values and n >= MIN_SHARE * len(col.values)}
            classes.discard(None)
            if classes:
                found[col.name] = classes  # type: ignore[assignment]
        return found

    return classify


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=200, help="values per generated column")
    args = parser.parse_args()

    import realdata

    tables = realdata.corpus_tables()
    tools = {"catalog": accuracy.catalogers, "presidio (pattern recognizers)": presidio(presidio_recognizers())}
    print(f"machine: {machine()}")
    print(f"generated: {len(accuracy.COLUMNS_BY_CLASS)} classes x {len(accuracy.LOCALES)} locales, {args.rows} values each")
    print("| tool | recall (named columns) | recall (columns c1, c2...) | precision, non-personal corpus columns |")
    print("|---|---|---|---|")
    details = []
    for label, tool in tools.items():
        named, named_misses = accuracy.recall(tool, args.rows)
        opaque, opaque_misses = accuracy.recall(tool, args.rows, opaque=True)
        precision, columns, flagged = accuracy.corpus_precision(tool, tables)
        print(f"| {label} | {named:.3f} | {opaque:.3f} | {precision:.3f} ({columns - len(flagged)}/{columns}) |")
        details.append((label, named_misses, opaque_misses, flagged))
    for label, named_misses, opaque_misses, flagged in details:
        print(f"\n{label}: missed (named) {named_misses}\n  missed (opaque) {opaque_misses}\n  flagged in corpus {flagged}")


if __name__ == "__main__":
    main()
