"""The checks the heuristic agent writes: one hypothesis per issue type, tested on evidence the
detector did not use.

Each check is a real Python file of this package, named after the issue type it tests
(``outliers.py`` tests ``outliers``; ``generic.py`` serves a type no check is written for).  What
runs in the sandbox (over the snapshot) and, unchanged, in the stored script against the real
database is the part of the file below its ``BLOCK_START`` line; the imports above it exist for
linters, type checkers and readers, and name what the session script defines before the block
(``setup.py``, then ``helpers.py``; the literals the blocks' heads write are declared in
``session.py``).  The setup and explore blocks' code lives here the same way.  A check returns

    {"hypothesis": what is being tested, "verdict": "confirmed" | "refuted" | "inconclusive",
     "reason": the evidence that decided, "affected": the rows the check counts, "evidence": {...}}

A detector says "this column has N values beyond a fence"; the check asks whether that means
what the issue claims: are the values isolated from the rest, or normal within their group or
season; are the repeated keys copies of one row or different things sharing a name; are the
"variants" numbers or dates, or spellings sharing what their rows say; does a placeholder stand
alone in its cell, among rows that are incomplete elsewhere.  Reading is bounded: value counts
and group pairs are capped (helpers' LIMIT) and say so when the cap is reached.
"""

from __future__ import annotations

from importlib import resources

BLOCK_START = "# --- the block sent to the sandbox starts here ---\n"

# files of this package that are not a check: the setup and explore blocks' code, what every
# check shares, and the declarations of the names the blocks' heads and the setup define
SCRIPT_FILES = ("explore.py", "setup.py")  # top-level code that reads the table: run, never imported
_NOT_CHECKS = ("__init__.py", "helpers.py", "session.py", *SCRIPT_FILES)


def block_of(file: str, package: str = __package__) -> str:
    """The code of `package`'s `file` (this package's by default) that the session script carries."""
    text = resources.files(package).joinpath(file).read_text(encoding="utf-8")
    head, marker, block = text.partition(BLOCK_START)
    if not marker:
        raise ValueError(f"{package}/{file} has no {BLOCK_START.strip()!r} line")
    return block


# what a check runs from another module of the package, sent in its block before the check: the
# module is the one definition the host runs too
SHIPPED_BEFORE = {"sensitive_class": ("cataloger_dagster.core.sensitive", "rules.py")}


def check_code(kind: str) -> str:
    """The block of the check of `kind`, after the module it runs (SHIPPED_BEFORE), if any."""
    shipped = SHIPPED_BEFORE.get(kind)
    own = block_of(f"{kind}.py")
    return block_of(shipped[1], shipped[0]) + "\n\n" + own if shipped else own


HELPERS = block_of("helpers.py")
CHECKS: dict[str, str] = {
    entry.name.removesuffix(".py"): check_code(entry.name.removesuffix(".py"))
    for entry in sorted(resources.files(__package__).iterdir(), key=lambda e: e.name)
    if entry.name.endswith(".py") and entry.name not in _NOT_CHECKS
}
