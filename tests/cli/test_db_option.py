"""``--db`` (issue 29.3): a plain path is a SQLite file; anything else that is not a database
URL, or a SQLite file whose folder does not exist, is one line on stderr and exit 2, and no
folder is made."""

from __future__ import annotations

import sqlite3

import pytest

from ndnsci.cli import main


def test_a_plain_path_is_a_sqlite_file(tmp_path, capsys):
    db = tmp_path / "plain.db"
    assert main(["catalog", "migrate", "--db", str(db)]) == 0
    with sqlite3.connect(db) as opened:
        assert opened.execute("select count(*) from alembic_version").fetchone() == (1,)
    assert main(["catalog", "token", "list", "--db", str(db)]) == 0
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.parametrize(
    "command",
    [["catalog", "migrate"], ["catalog", "token", "list"], ["catalog", "token", "create", "x"],
     ["catalog", "serve"], ["catalog", "mirror", "--from", "http://127.0.0.1:9"],
     ["catalog", "conflicts"], ["publish", "."]],
)  # fmt: skip
@pytest.mark.parametrize(
    "db", ["nonsense://", "::::://x", "NOFOLDER", "DIR", "postgresql+nodriver://x/y"]
)
def test_a_bad_db_is_one_line_and_exit_2(tmp_path, capsys, command, db):
    given = {"NOFOLDER": str(tmp_path / "no" / "c.db"), "DIR": str(tmp_path)}.get(db, db)
    assert main([*command, "--db", given]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("ndnsci "), err
    assert not (tmp_path / "no").exists(), "a folder was made"


def test_a_file_that_is_no_database_is_one_line(tmp_path, capsys):
    text = tmp_path / "notes.txt"
    text.write_text("not a database\n")
    assert main(["catalog", "token", "list", "--db", str(text)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["ndnsci catalog: the database refused: file is not a database"]
