"""core/reviews/commands.py: the command and launchpad config a catalog page shows.  Hostile
names and notes come back exactly, as arguments (the shell's own reading) and as YAML."""

import shlex
import subprocess

import pytest
import yaml

from cataloger_dagster.core.shown import has_control
from cataloger_dagster.core.reviews.commands import (
    command_tail, launchpad_config, launchpad_head, review_command, review_control, yaml_quote,
)

HOSTILE = [
    "plain_id",
    "-starts-with-dash",
    "it's $(touch pwned) `touch pwned2` \"q\" ; rm -rf / #",
    "line\nbreak\r\tand <script>alert(1)</script>",
    "uni café 日本 \u2028 \u0085 \x7f \x1b[31m 😀",
    "back\\slash \\\" '' ",
    "",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_every_part_of_the_command_comes_back_as_one_argument(text, tmp_path):
    tail = command_tail(text or "t", text or "i", database=text or "d", store=str(tmp_path / text[:5].replace("/", "")))
    command = review_command(tail, "expected", text)
    assert command.startswith("cataloger review ")
    # a real shell reads it (printf prints each argument on its own, NUL-separated)
    shown = subprocess.run(["bash", "-c", "printf '%s\\0' " + command.removeprefix("cataloger review ")],
                           capture_output=True, cwd=tmp_path, check=True).stdout
    words = shown.decode("utf-8", "surrogateescape").split("\0")[:-1]
    assert words[:3] == ["--expected", "--note", text]
    assert words[-3:] == ["--", text or "t", text or "i"]
    assert not list(tmp_path.glob("pwned*"))
    if not has_control(text):   # shlex reads the plain quoting; bash's $'...' is for control characters
        assert shlex.split(command)[2:] == words


@pytest.mark.parametrize("text", HOSTILE)
def test_the_launchpad_config_parses_back_to_the_same_strings(text):
    head = launchpad_head(text, text + "x")
    config = yaml.safe_load(launchpad_config(head, "accept", text))
    assert config == {"ops": {"record_review": {"config": {
        "table": text, "issue_id": text + "x", "verdict": "accept", "note": text}}}}
    assert all(32 <= ord(c) < 127 or c == "\n" for c in launchpad_config(head, "accept", text))


def test_yaml_quote_escapes_what_is_not_printable_ascii():
    assert yaml_quote('a"b\\c') == '"a\\"b\\\\c"'
    assert yaml_quote("é\n😀") == '"\\u00e9\\u000a\\U0001f600"'


def test_the_control_shows_a_dismiss_with_an_empty_note_first():
    control = review_control("t", "t_missing_a", database="shop", store="/s")
    assert control["command"] == "cataloger review --dismiss --note '' --name shop --store /s -- t t_missing_a"
    assert control["config"].endswith('verdict: dismiss\n      note: ""\n') and control["job"] == "review_issue"
