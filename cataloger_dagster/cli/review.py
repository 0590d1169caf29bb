"""`cataloger review TABLE ISSUE_ID --dismiss|--accept|--expected --note ...`,
`cataloger review TABLE COLUMN --not-personal [--class KEY]|--personal KEY` and
`cataloger review TABLE --list`: a person's verdicts on a table's findings and on the classes of
personal data the classifier gave its columns.

Registered in the main CLI with `main.add_command(review)`.  Writes only the table's review
log (through `record_review`, as the `review_issue` job does); never connects to the
database (its URL is needed only for the name that the store's layout uses).
"""

from __future__ import annotations

import click

from cataloger_dagster.cli.options import EXAMPLE_DATABASE, examples
from cataloger_dagster.cli.scripts import _common, _context, _run


def _shown(review) -> str:
    note = f": {review.note!r}" if review.note else ""
    return f"{review.at[:19]} {review.verdict:<8} {review.issue_id!r} by {review.reviewer}{note}"


@click.command(
    "review",
    epilog=examples(
        f"cataloger review orders --list --database {EXAMPLE_DATABASE}",
        f"cataloger review orders ISSUE_ID --dismiss --note 'refunds are negative' --database {EXAMPLE_DATABASE}",
        "cataloger review orders ISSUE_ID --expected --name shop.duckdb --store s3://bucket/catalog",
        f"cataloger review customers referrer_code --not-personal --class username --database {EXAMPLE_DATABASE}",
        f"cataloger review customers contact --personal email --database {EXAMPLE_DATABASE}",
    ),
)
@click.argument("table")
@click.argument("issue_id", required=False)
@click.option("--dismiss", is_flag=True, help="A false alarm: do not raise it again as it is.")
@click.option("--accept", is_flag=True, help="A real problem: keep it and track it until fixed.")
@click.option(
    "--expected",
    is_flag=True,
    help="Normal for this table: a baseline, shown as known; only a change from it is an issue.",
)
@click.option(
    "--not-personal",
    is_flag=True,
    help="The column (given instead of ISSUE_ID) holds no personal data of its class (--class) or of any class it "
    "was given: the next run stops classifying it so, and its values are no longer masked.",
)
@click.option(
    "--personal",
    "personal_class",
    metavar="CLASS",
    help="The column (given instead of ISSUE_ID) holds personal data of CLASS (email, phone, ...) the classifier "
    "missed: the next run adds it, and masks its values.",
)
@click.option("--class", "data_class", metavar="CLASS", help="With --not-personal: the one class refuted.")
@click.option("--note", default="", help="Why (free text, kept as it is written).")
@click.option("--reviewer", help="Who reviews [default: CATALOGER_REVIEWER, else the OS user].")
@click.option(
    "--list", "listing", is_flag=True, help="Print TABLE's review log, oldest first, and each issue's current verdict."
)
@_common
def review(table, issue_id, dismiss, accept, expected, note, reviewer, listing, as_json, **options) -> None:
    """Accept, dismiss or mark 'expected' ISSUE_ID of TABLE's latest run; say that COLUMN holds
    personal data the classifier missed (--personal CLASS) or none of a class it gave it
    (--not-personal); or (--list) show the reviews.
    Put `--` before TABLE when a name starts with '-'.

    Writes only the store's review log: the database is never opened, its URL (or
    --name) only says which of the store's catalogs TABLE belongs to."""
    # the verdicts on personal data, and the catalog's options
    not_personal, personal_class, data_class = options["not_personal"], options["personal_class"], options["data_class"]
    database, name, store = options["database"], options["name"], options["store"]
    database_name = options["database_name"]
    flags = (
        ("dismiss", dismiss),
        ("accept", accept),
        ("expected", expected),
        ("not-personal", not_personal),
        ("personal", personal_class is not None),
    )
    given = [v for v, flag in flags if flag]
    if len(given) > 1:
        raise click.UsageError(f"give one verdict, not {' and '.join('--' + v for v in given)}")
    verdict = given[0] if given else None
    if data_class is not None and verdict != "not-personal":
        raise click.UsageError("--class goes with --not-personal (--personal takes its class itself)")
    if listing and (issue_id or verdict):
        raise click.UsageError("--list takes only TABLE (no ISSUE_ID, no verdict)")
    if not listing and not (issue_id and verdict):
        raise click.UsageError(
            "give ISSUE_ID and one of --dismiss / --accept / --expected, COLUMN and --not-personal / --personal CLASS, "
            "or --list"
        )

    from cataloger_dagster.core.sensitive.verdicts import ClassReview, record_class_review
    from cataloger_dagster.core.reviews.model import latest_reviews
    from cataloger_dagster.core.reviews.record import default_reviewer, record_review
    from cataloger_dagster.settings.model import load_settings

    def body():
        ctx = _context(database, name or database_name, store, table)
        if listing:
            reviews = ctx.store.read_reviews(ctx.prefix)
            current = latest_reviews(reviews)
            data = {
                **ctx.header(),
                "reviews": [r.model_dump(mode="json") for r in reviews],
                "current": {i: r.model_dump(mode="json") for i, r in current.items()},
            }
            lines = [f"{ctx.table} ({ctx.database}) in {ctx.store.describe()}: {len(reviews)} review(s)"]
            lines += [f"  {_shown(r)}" for r in reviews]
            if current:
                lines.append("current verdicts:")
                lines += [f"  {r.verdict:<8} {i!r}" for i, r in current.items()]
            return data, "\n".join(lines)
        who = reviewer if reviewer and reviewer.strip() else default_reviewer(load_settings().reviewer)
        if verdict in ("personal", "not-personal"):
            said = ClassReview(
                ctx.table,
                issue_id,
                verdict.replace("-", "_"),
                personal_class if verdict == "personal" else data_class,
                note,
                who,
                via="cli",
            )
            written = record_class_review(ctx.store, ctx.database, said)
            return (
                {
                    **ctx.header(),
                    "reviews": [r.model_dump(mode="json") for r, _ in written],
                    "uris": [u for _, u in written],
                },
                "\n".join(f"recorded: {_shown(r)}\n  in {u}" for r, u in written),
            )
        entry, uri = record_review(ctx.store, ctx.database, ctx.table, issue_id, verdict, note, who, via="cli")
        return (
            {**ctx.header(), "review": entry.model_dump(mode="json"), "uri": uri},
            f"recorded: {_shown(entry)}\n  in {uri}",
        )

    _run(as_json, body)
