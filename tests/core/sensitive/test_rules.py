"""The value rules of the classes of personal data are one module, run by the classifier on the host
and sent unchanged as a block of the session script before the sandbox's check of a class."""

from __future__ import annotations

import ast
import sys

from cataloger_dagster.core.investigate.checks import CHECKS, HELPERS, SCRIPT_FILES, block_of
from cataloger_dagster.core.sensitive import rules

RULES_BLOCK = block_of("rules.py", "cataloger_dagster.core.sensitive")


def _top_level_names(code: str) -> set[str]:
    names = set()
    for node in ast.parse(code).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


def test_the_sandbox_check_carries_the_rules_before_itself():
    assert CHECKS["sensitive_class"].startswith(RULES_BLOCK)
    assert "def check_sensitive_class(" in CHECKS["sensitive_class"]


def test_the_rules_import_only_what_the_sandbox_image_has():
    allowed = set(sys.stdlib_module_names) | {"phonenumbers", "stdnum"}
    imported = set()
    for node in ast.walk(ast.parse(RULES_BLOCK)):
        if isinstance(node, ast.Import):
            imported |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add((node.module or "").split(".")[0])
    assert imported and imported <= allowed, imported - allowed
    assert "__future__" not in RULES_BLOCK  # a block sits in the middle of the script


def test_no_top_level_name_of_the_rules_is_another_blocks():
    """The session script is one namespace: a rule named like a helper (`as_date`) would replace it
    for every check after it."""
    others = _top_level_names(HELPERS) | {n for f in SCRIPT_FILES for n in _top_level_names(block_of(f))}
    for kind, code in CHECKS.items():
        others |= _top_level_names(code.removeprefix(RULES_BLOCK) if kind == "sensitive_class" else code)
    shared_imports = {"re", "ibis", "json", "os", "math", "dt", "ipaddress", "Any", "Callable"}
    assert (_top_level_names(RULES_BLOCK) & others) - shared_imports == set()


def test_a_value_is_read_as_the_rules_read_it():
    import datetime as dt

    assert rules.value_text(dt.date(1990, 2, 1)) == "1990-02-01" and rules.value_text(31206.0) == "31206"
    assert rules.day_of("01.02.1990") == dt.date(1990, 2, 1) and rules.day_of("soon") is None


def test_an_email_rule_in_the_sandbox_is_the_syntax_the_host_validator_also_requires():
    from cataloger_dagster.core.sensitive.validators import email

    for value in ["a.b@example.com", "x+tag@sub.example.co.uk", "no-at.example.com", "a@b", "a@example.123"]:
        assert rules.email_syntax(value) == email(value), value
