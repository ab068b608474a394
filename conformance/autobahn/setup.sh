#!/usr/bin/env bash
# Installs the Autobahn|Testsuite WebSocket fuzzing client (wstest, autobahntestsuite 0.8.2) into
# one directory, for conformance/autobahn/run.sh. Nothing is installed system-wide.
#
# wstest 0.8.2 is Python 2 code (its Python 3 upload does not import), and Debian 12 ships no
# Python 2. So this script:
#   1. points apt (with its own lists and cache under DIR) at the Debian 11 "bullseye" suite of
#      the mirror this machine already uses, and downloads the Python 2.7 packages;
#   2. unpacks them into DIR/root with dpkg -x (no install, no root needed);
#   3. bootstraps pip from Debian's bundled wheel and installs autobahntestsuite with the
#      versions pinned in constraints-py2.txt (the last releases that run on Python 2);
#   4. writes DIR/wstest, a wrapper that runs it with the unpacked interpreter and libraries, and
#      DIR/python2, the same interpreter for other scripts (run.sh --tls runs wstest_tls.py with it).
# Debian or Ubuntu with apt-get and dpkg only; about 30 s and 25 MB of downloads.
#
# Usage: conformance/autobahn/setup.sh [DIR]      (default DIR: /tmp/autobahn)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
DIR=${1:-/tmp/autobahn}
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)

command -v apt-get >/dev/null && command -v dpkg >/dev/null \
  || { echo "autobahn setup: needs apt-get and dpkg (Debian/Ubuntu)" >&2; exit 1; }
MULTIARCH=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo "$(uname -m)-linux-gnu")

# 1. A private apt configuration for bullseye on this machine's own mirror.
mirror=""
if [ -f /etc/apt/sources.list.d/debian.sources ]; then
  mirror=$(awk '$1 == "URIs:" { print $2; exit }' /etc/apt/sources.list.d/debian.sources)
fi
if [ -z "$mirror" ] && [ -f /etc/apt/sources.list ]; then
  mirror=$(awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) { print $i; exit } }' /etc/apt/sources.list)
fi
mirror=${mirror:-http://deb.debian.org/debian}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[ -f "$keyring" ] || { echo "autobahn setup: $keyring is missing (apt-get install debian-archive-keyring)" >&2; exit 1; }

APT="$DIR/apt"
mkdir -p "$APT/lists/partial" "$APT/cache/archives/partial" "$DIR/debs" "$DIR/root"
echo "deb [signed-by=$keyring] $mirror bullseye main" > "$APT/sources.list"
apt_opts=(-o "Dir::Etc::SourceList=$APT/sources.list" -o "Dir::Etc::SourceParts=/dev/null"
          -o "Dir::State::Lists=$APT/lists" -o "Dir::Cache=$APT/cache" -o "APT::Get::List-Cleanup=0")
echo "autobahn setup: Python 2.7 from $mirror bullseye"
apt-get "${apt_opts[@]}" update -qq

# 2. Download and unpack.
packages=(python2.7 python2.7-minimal libpython2.7 libpython2.7-minimal libpython2.7-stdlib
          python2.7-dev libpython2.7-dev libssl1.1 libffi7 python-pip-whl)
(cd "$DIR/debs" && apt-get "${apt_opts[@]}" download -qq "${packages[@]}")
for deb in "$DIR"/debs/*.deb; do dpkg -x "$deb" "$DIR/root"; done

# 3. pip, then the test suite with pinned versions.
PY="$DIR/root/usr/bin/python2.7"
LIBS="$DIR/root/usr/lib/$MULTIARCH"
WHEELS="$DIR/root/usr/share/python-wheels"
export LD_LIBRARY_PATH="$LIBS"
pip_wheel=$(ls "$WHEELS"/pip-*.whl | head -1)
PYTHONPATH="$pip_wheel" "$PY" -m pip install -q --no-index --find-links "$WHEELS" pip setuptools wheel
"$PY" -m pip install -q --disable-pip-version-check --force-reinstall "pip==20.3.4" "setuptools==44.1.1"
CFLAGS="-I$DIR/root/usr/include -I$DIR/root/usr/include/python2.7" \
  "$PY" -m pip install -q --disable-pip-version-check -c "$HERE/constraints-py2.txt" "autobahntestsuite==0.8.2" "wsaccel<0.6.3"

# 4. The wrapper.
cat > "$DIR/wstest" <<WRAPPER
#!/bin/sh
# Autobahn|Testsuite wstest on the Python 2.7 unpacked by conformance/autobahn/setup.sh.
export LD_LIBRARY_PATH="$LIBS"
exec "$PY" "$DIR/root/usr/local/bin/wstest" "\$@"
WRAPPER
cat > "$DIR/python2" <<WRAPPER
#!/bin/sh
# The Python 2.7 unpacked by conformance/autobahn/setup.sh, with wstest's packages.
export LD_LIBRARY_PATH="$LIBS"
exec "$PY" "\$@"
WRAPPER
chmod +x "$DIR/wstest" "$DIR/python2"
"$DIR/wstest" -a >/dev/null
echo "autobahn setup: $DIR/wstest ready"
