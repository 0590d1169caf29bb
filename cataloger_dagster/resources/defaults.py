"""The default names the resources use: the store's folder, the demo database's file, the
Docker images.  This module imports nothing, so that the command line can show them in its
help without loading Dagster, ibis or the Docker SDK, which the resources themselves import."""

DEFAULT_STORE = "catalog"
# relative to the working folder, as `make run` and `cataloger demo` write it
DEMO_DATABASE = "data/demo.duckdb"
SANDBOX_BASE_IMAGE = "cataloger-base:bookworm"
SANDBOX_IMAGE = "cataloger-sandbox:latest"
RUN_IMAGE = "cataloger-run:latest"
# where `cataloger sandbox build-image --debootstrap-base` fetches Debian
DEBIAN_MIRROR = "http://deb.debian.org/debian"
