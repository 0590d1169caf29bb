"""settings/documentation.py: the settings table of docs/settings.md and `.env.example` are the
settings' fields.

With CATALOGER_UPDATE_DOCS=1 they are rewritten from the settings (then the test checks the
rewritten files, so it still fails on nothing).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from cataloger_dagster.settings.documentation import OTHER_VARIABLES, env_example, settings_table
from cataloger_dagster.settings.model import CatalogerSettings, variable

ROOT = Path(__file__).resolve().parents[2]
SETTINGS_PAGE = ROOT / "docs" / "settings.md"
ENV_EXAMPLE = ROOT / ".env.example"
TABLE_START = "<!-- generated from CatalogerSettings"
TABLE_END = "<!-- end of the generated settings table -->"


def generated_table(readme: str) -> str:
    start = readme.index(TABLE_START)
    start = readme.index("\n", start) + 1
    return readme[start:readme.index(TABLE_END)]


def test_readme_and_env_example_are_the_settings(clean_env):
    if os.environ.get("CATALOGER_UPDATE_DOCS"):
        readme = SETTINGS_PAGE.read_text()
        SETTINGS_PAGE.write_text(readme.replace(generated_table(readme), settings_table()))
        ENV_EXAMPLE.write_text(env_example())
    readme_table = generated_table(SETTINGS_PAGE.read_text())
    example = ENV_EXAMPLE.read_text()
    hint = "run CATALOGER_UPDATE_DOCS=1 pytest tests/settings/test_documentation.py to regenerate it"
    assert readme_table == settings_table(), f"docs/settings.md's settings table is stale: {hint}"
    assert example == env_example(), f".env.example is stale: {hint}"

    # and what they say: every setting with its default, nothing else
    fields = CatalogerSettings.model_fields
    row_names = set(re.findall(r"^\| `([A-Z_]+)` \|", readme_table, re.M))
    assert row_names == {variable(f) for f in fields} | set(OTHER_VARIABLES)
    assigned = set(re.findall(r"^# ([A-Z_]+)=", example, re.M))
    assert assigned == {variable(f) for f in fields} | set(OTHER_VARIABLES)
    for field, info in fields.items():
        shown = "" if info.default is None else str(info.default)
        if isinstance(info.default, bool):
            shown = "1" if info.default else "0"
        assert f"| `{variable(field)}` | {f'`{shown}`' if shown else ''} |" in readme_table, field
        assert f"\n# {variable(field)}={shown}\n" in example, field
    # a CATALOGER_ variable that is no setting would be read by nothing
    mentioned = set(re.findall(r"CATALOGER_[A-Z_]+[A-Z]", readme_table + example))
    assert mentioned <= {variable(f) for f in fields}, mentioned - {variable(f) for f in fields}
