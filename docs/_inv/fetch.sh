#!/usr/bin/env bash
# Refresh the intersphinx inventories shipped in this folder (run by hand, rarely;
# the docs build never fetches them: CI has no access to the projects' sites).
#
# Each inventory is the objects.inv of a Debian documentation package, fetched by
# name with apt through the Debian mirror this machine is configured with:
#   numpy.inv   python-numpy-doc   (Debian 13 "trixie")
#   scipy.inv   python-scipy-doc   (Debian 13 "trixie")
#   mpmath.inv  python-mpmath-doc  (Debian 13 "trixie")
#   python.inv  python3.11-doc     (Debian 12 "bookworm", the Python of CI)
# Afterwards update the versions and hashes in README.md.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# the configured Debian mirror (the first URIs line of the system's sources)
mirror=$(grep -h -m1 -E '^URIs: .*/debian$' /etc/apt/sources.list.d/*.sources | awk '{print $2}')
mkdir -p "$work/lists/partial" "$work/cache/archives/partial"
opts=(-o Dir::Etc::sourceparts=- -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache")
fetch() {   # fetch SUITE PACKAGE...
    local suite=$1; shift
    echo "deb $mirror $suite main" > "$work/$suite.list"
    apt-get -q "${opts[@]}" -o "Dir::Etc::sourcelist=$work/$suite.list" update >/dev/null
    (cd "$work" && apt-get -q "${opts[@]}" -o "Dir::Etc::sourcelist=$work/$suite.list" download "$@")
}
fetch trixie python-numpy-doc python-scipy-doc python-mpmath-doc
fetch bookworm python3.11-doc
for deb in "$work"/*.deb; do
    dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$work" --wildcards '*/html/objects.inv'
done
cp "$work/usr/share/doc/python-numpy/html/objects.inv" "$here/numpy.inv"
cp "$work/usr/share/doc/python-scipy-doc/html/objects.inv" "$here/scipy.inv"
cp "$work/usr/share/doc/python-mpmath-doc/html/objects.inv" "$here/mpmath.inv"
cp "$work/usr/share/doc/python3.11/html/objects.inv" "$here/python.inv"
(cd "$work" && sha256sum ./*.deb)
(cd "$here" && sha256sum ./*.inv)
