"""The local backend of the store: a folder (created on first write)."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

from pydantic import Field

from cataloger_dagster.core.layout import RUN_FILE
from cataloger_dagster.resources.store.base import ArtifactExistsError, CatalogStore, StoreError


class LocalStore(CatalogStore):
    """The store in a local folder (created on first write)."""

    root: str = Field(description="Folder holding the store; created when missing.")

    @property
    def _root(self) -> Path:
        return Path(self.root).expanduser().absolute()

    def _path(self, key: str) -> Path:
        return self._root.joinpath(*key.split("/"))

    def _error(self, action: str, path: Path, e: OSError) -> StoreError:
        if self._root.exists() and not self._root.is_dir():
            return StoreError(
                f"the store {self._root} is a file, not a folder; point --store / CATALOGER_STORE at a folder"
            )
        return StoreError(
            f"cannot {action} {path} in the store {self._root}: "
            f"{e.strerror or e}; point --store / CATALOGER_STORE at a folder you can "
            "read and write"
        )

    def _mkdirs(self, folder: Path) -> None:
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise self._error("create the folder", folder, e) from None

    def _read(self, key: str) -> bytes | None:
        path = self._path(key)
        try:
            return path.read_bytes()
        except (FileNotFoundError, IsADirectoryError):
            return None
        except OSError as e:
            raise self._error("read", path, e) from None

    def _write_new(self, key: str, data: bytes) -> None:
        path = self._path(key)
        self._mkdirs(path.parent)
        tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
        try:
            tmp.write_bytes(data)
            try:
                # link() never replaces, and readers only ever see whole files
                os.link(tmp, path)
            except FileExistsError:
                raise ArtifactExistsError(str(path)) from None
            except OSError:
                # file systems without hard links: still exclusive, not atomic
                try:
                    with open(path, "xb") as f:
                        f.write(data)
                except FileExistsError:
                    raise ArtifactExistsError(str(path)) from None
        except ArtifactExistsError:
            raise
        except OSError as e:
            raise self._error("write", path, e) from None
        finally:
            tmp.unlink(missing_ok=True)

    def _replace(self, key: str, data: bytes) -> None:
        path = self._path(key)
        self._mkdirs(path.parent)
        tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
        try:
            tmp.write_bytes(data)
            os.replace(tmp, path)
        except OSError as e:
            raise self._error("write", path, e) from None
        finally:
            tmp.unlink(missing_ok=True)

    def _list(self, key: str) -> tuple[list[str], list[str]]:
        path = self._path(key)
        folders: list[str] = []
        files: list[str] = []
        try:
            with os.scandir(path) as entries:
                for entry in entries:
                    if entry.name.startswith("."):
                        continue
                    (folders if entry.is_dir() else files).append(entry.name)
        except (FileNotFoundError, NotADirectoryError) as e:
            if self._root.exists() and not self._root.is_dir():
                raise self._error("list", path, e) from None
        except OSError as e:
            raise self._error("list", path, e) from None
        return folders, files

    def _claim(self, folder: str, run_file: bytes) -> bool:
        path = self._path(folder)
        self._mkdirs(path.parent)
        try:
            path.mkdir()  # atomic: exactly one claimant creates the folder
        except FileExistsError:
            return False
        except OSError as e:
            raise self._error("create the folder", path, e) from None
        self._write_new(f"{folder}/{RUN_FILE}", run_file)
        return True

    def _release(self, folder: str) -> None:
        path = self._path(folder)
        (path / RUN_FILE).unlink(missing_ok=True)
        try:
            path.rmdir()
        except OSError:
            pass  # not empty after all: leave it

    def _key_uri(self, key: str) -> str:
        return str(self._path(key))

    def describe(self) -> str:
        return f"local folder {self._root}"
