#!/bin/sh
# scripts/install-conf.sh SRC DEST: installs a configuration file without ever replacing an admin's.
#   DEST absent             SRC is installed as DEST (mode 644)
#   DEST the same as SRC    nothing to do
#   DEST different          DEST is kept; SRC is installed as DEST.new and a line says so
# (Debian's conffile rule without the question: compare DEST with DEST.new and merge by hand.)
# scripts/install-conf.sh --remove SRC DEST (make uninstall): DEST.new goes; DEST goes when it is SRC,
# the shipped file; an admin's changed DEST is kept, and a line says so.
set -e
if [ "$1" = --remove ] && [ $# -eq 3 ]; then
	rm -f "$3.new"
	if cmp -s "$2" "$3"; then
		rm -f "$3"
	elif [ -e "$3" ]; then
		echo "install-conf: $3 differs from the shipped file (changed by the admin): kept"
	fi
	exit 0
fi
[ $# -eq 2 ] || { echo "usage: install-conf.sh [--remove] SRC DEST" >&2; exit 2; }
src=$1 dest=$2
if [ ! -e "$dest" ] && [ ! -L "$dest" ]; then
	install -m 644 "$src" "$dest"
elif cmp -s "$src" "$dest"; then
	:
else
	install -m 644 "$src" "$dest.new"
	echo "install-conf: $dest exists and differs from the shipped file: kept; the shipped one is $dest.new"
fi
