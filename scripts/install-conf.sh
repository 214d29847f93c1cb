#!/bin/sh
# scripts/install-conf.sh SRC DEST: installs a configuration file without ever replacing an admin's.
#   DEST absent             SRC is installed as DEST (mode 644)
#   DEST the same as SRC    nothing to do
#   DEST different          DEST is kept; SRC is installed as DEST.new and a line says so
# (Debian's conffile rule without the question: compare DEST with DEST.new and merge by hand.)
set -e
[ $# -eq 2 ] || { echo "usage: install-conf.sh SRC DEST" >&2; exit 2; }
src=$1 dest=$2
if [ ! -e "$dest" ] && [ ! -L "$dest" ]; then
	install -m 644 "$src" "$dest"
elif cmp -s "$src" "$dest"; then
	:
else
	install -m 644 "$src" "$dest.new"
	echo "install-conf: $dest exists and differs from the shipped file: kept; the shipped one is $dest.new"
fi
