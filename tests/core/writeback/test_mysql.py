"""A MySQL column's definition read from SHOW CREATE TABLE with only its comment left out;
tests/core/writeback/test_session.py shows on a real server that type, nullability, default
and ON UPDATE survive the comment's writing."""

from __future__ import annotations

import pytest

from cataloger_dagster.core.writeback.mysql import DefinitionError, column_definitions

# as MariaDB writes it: quotes doubled, a backslash and a newline escaped in strings
CREATE = """CREATE TABLE `o``r, (x)` (
  `id` int(11) NOT NULL AUTO_INCREMENT COMMENT 'The key',
  `na,me` varchar(20) NOT NULL DEFAULT 'a''b, (c) COMMENT \\'x' COMMENT 'it''s, a \\n comment',
  `g` int(11) GENERATED ALWAYS AS (`id` + 1) VIRTUAL,
  `comment` timestamp NOT NULL DEFAULT current_timestamp() ON UPDATE current_timestamp(),
  PRIMARY KEY (`id`),
  KEY `k` (`na,me`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='the table'"""


def test_each_column_keeps_everything_but_its_comment():
    assert column_definitions(CREATE) == {
        "id": "int(11) NOT NULL AUTO_INCREMENT",
        "na,me": "varchar(20) NOT NULL DEFAULT 'a''b, (c) COMMENT \\'x'",
        "g": "int(11) GENERATED ALWAYS AS (`id` + 1) VIRTUAL",
        "comment": "timestamp NOT NULL DEFAULT current_timestamp() ON UPDATE current_timestamp()",
    }


def test_a_definition_it_cannot_read_is_an_error_not_a_guess():
    with pytest.raises(DefinitionError, match="unterminated"):
        column_definitions("CREATE TABLE `t` (`a` varchar(3) DEFAULT 'x)")
    with pytest.raises(DefinitionError, match="no column list"):
        column_definitions("CREATE VIEW `v` AS SELECT 1")
