"""`LocalStore` (store/local.py): the store in a local folder.  What only this backend
does: the folder made on first write, whole files or none for readers (hard links and renames),
hidden temporary files, and errors that name the folder and say what to do."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from cataloger_dagster.resources.store import ArtifactExistsError, LocalStore, StoreError

PREFIX = "shop/orders"


def stamp(i: int) -> str:
    """The i-th of a series of distinct, ascending run timestamps."""
    return f"2026-01-01T00:00:{i // 1000:02d}.{i % 1000:06d}Z"


def test_an_unusable_local_root_gives_a_clear_error(tmp_path):
    root = tmp_path / "not-a-folder"
    root.write_text("I am a file")
    store = LocalStore(root=str(root))
    with pytest.raises(StoreError, match="not-a-folder is a file, not a folder.*CATALOGER_STORE"):
        store.write_artifact(PREFIX, stamp(1), "catalog.html", "x")
    with pytest.raises(StoreError, match="is a file, not a folder"):
        store.list_runs(PREFIX)



def test_the_folder_is_made_on_first_write_and_not_before(tmp_path):
    root = tmp_path / "deep" / "er" / "store"
    store = LocalStore(root=str(root))
    assert store.list_runs(PREFIX) == [] and store.read_index("shop") is None
    assert not (tmp_path / "deep").exists()  # reading never creates anything
    uri = store.write_artifact(PREFIX, stamp(1), "catalog.html", "<p>x</p>")
    assert uri == str(root / "shop" / "orders" / stamp(1) / "catalog.html")
    assert Path(uri).read_text() == "<p>x</p>"


def test_a_relative_or_home_root_is_made_absolute(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    home = LocalStore(root="~/store")
    assert home.uri(PREFIX) == str(tmp_path / "home" / "store" / "shop" / "orders")
    assert str(tmp_path / "home" / "store") in home.describe()
    monkeypatch.chdir(tmp_path)
    relative = LocalStore(root="rel")
    uri = relative.write_artifact(PREFIX, stamp(1), "a.txt", "x")
    # a uri stays valid after the working directory changes (Dagster steps run elsewhere)
    assert uri == str(tmp_path / "rel" / "shop" / "orders" / stamp(1) / "a.txt")
    monkeypatch.chdir("/")
    assert Path(uri).read_text() == "x"


def test_writes_leave_no_temporary_files_and_hidden_files_are_never_listed(tmp_path):
    root = tmp_path / "store"
    store = LocalStore(root=str(root))
    store.write_artifact(PREFIX, stamp(1), "catalog.html", "a")
    with pytest.raises(ArtifactExistsError):
        store.write_artifact(PREFIX, stamp(1), "catalog.html", "b")
    store.write_index("shop", "one")
    store.write_index("shop", "two")
    every = sorted(str(p.relative_to(root)) for p in root.rglob("*"))
    assert not [p for p in every if Path(p).name.startswith(".")], every
    # what a writer killed mid-write leaves: its temporary file and folder stay out of sight
    (root / "shop" / "orders" / f".{stamp(2)}.tmp").mkdir()
    (root / "shop" / "orders" / stamp(1) / ".catalog.html.dead.tmp").write_text("half")
    assert store.list_runs(PREFIX) == [stamp(1)]
    assert store._list(f"{PREFIX}/{stamp(1)}") == ([], ["catalog.html"])


def test_readers_see_a_whole_artifact_or_none_at_all(tmp_path):
    store = LocalStore(root=str(tmp_path / "store"))
    big = b"x" * (16 * 1024 * 1024)
    seen: set[int] = set()
    done = threading.Event()

    def read() -> None:
        while not done.is_set():
            data = store.read_artifact(PREFIX, stamp(1), "big.bin")
            seen.add(-1 if data is None else len(data))

    reader = threading.Thread(target=read)
    reader.start()
    try:
        store.write_artifact(PREFIX, stamp(1), "big.bin", big)
    finally:
        done.set()
        reader.join(timeout=60)
    assert seen <= {-1, len(big)}, sorted(seen)


def test_the_index_is_replaced_whole(tmp_path):
    store = LocalStore(root=str(tmp_path / "store"))
    versions = [(str(i) * (2 * 1024 * 1024)) for i in range(4)]
    seen: set[str | None] = set()
    done = threading.Event()

    def read() -> None:
        while not done.is_set():
            text = store.read_index("shop")
            seen.add(None if text is None else text[:1] + str(len(text)))

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for html in versions:
            store.write_index("shop", html)
    finally:
        done.set()
        reader.join(timeout=60)
    assert seen <= {None, *(v[:1] + str(len(v)) for v in versions)}, seen
    assert store.read_index("shop") == versions[-1]


def test_release_leaves_a_folder_that_holds_more_than_its_claim(tmp_path):
    root = tmp_path / "store"
    store = LocalStore(root=str(root))
    folder = f"{PREFIX}/{stamp(1)}"
    assert store._claim(folder, b'{"run_id": "a"}')
    store.write_artifact(PREFIX, stamp(1), "catalog.html", "written meanwhile")
    store._release(folder)
    # the claim is gone, what another writer put there is not
    assert not (root / "shop" / "orders" / stamp(1) / "run.json").exists()
    assert store.read_artifact(PREFIX, stamp(1), "catalog.html") == b"written meanwhile"


def test_a_root_below_a_file_gives_a_clear_error(tmp_path):
    (tmp_path / "file").write_text("not a folder")
    store = LocalStore(root=str(tmp_path / "file" / "store"))
    with pytest.raises(StoreError, match="cannot create the folder .* CATALOGER_STORE at a folder"):
        store.write_artifact(PREFIX, stamp(1), "catalog.html", "x")
    with pytest.raises(StoreError, match="cannot create the folder"):
        store.open_run(PREFIX, "run-1")
    with pytest.raises(StoreError, match="cannot create the folder .*index_history"):
        store.write_index("shop", "x")
    # an OSError never escapes as such: callers catch StoreError
    assert not issubclass(StoreError, OSError)
