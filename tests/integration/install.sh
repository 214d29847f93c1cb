#!/bin/sh
# tests/integration/install.sh: `make install` honours PREFIX and DESTDIR, installs every program,
# library, example and document, and the installed programs run; `make uninstall` with the same PREFIX
# and DESTDIR removes every file install wrote.
. "$(dirname "$0")/../lib.sh"
cd "$TOP" || exit 1
T=$(mktmp)
trap 'rm -rf "$T"' EXIT
expect "make install PREFIX=/opt/rm DESTDIR=\$T" sh -c "make --no-print-directory B='$B' install PREFIX=/opt/rm DESTDIR='$T' >'$T/log' 2>&1"
R=$T/opt/rm
for f in bin/rankmapctl sbin/rankmapd lib/rankmap/librankmap_mpi_openmpi.so lib/rankmap/librankmap_mpi_mpich.so \
	lib/rankmap/spank_rankmap.so lib/systemd/system/rankmapd.service share/rankmap/examples/rankmapd.conf \
	share/rankmap/examples/torus.conf.example share/rankmap/examples/plugstack.conf.example \
	share/doc/rankmap/README.md share/doc/rankmap/ARCHITECTURE.md share/doc/rankmap/PROTOCOL.md share/man/man1/rankmapctl.1 \
	share/man/man8/rankmapd.8 share/man/man5/rankmapd.conf.5 share/man/man8/spank_rankmap.8; do
	expect "installed $f" test -s "$R/$f"
done
expect "nothing installed outside DESTDIR/PREFIX" test -z "$(find "$T" -mindepth 1 -maxdepth 1 ! -name opt ! -name log)"
expect "the unit starts the installed daemon" grep -q "^ExecStart=/opt/rm/sbin/rankmapd " "$R/lib/systemd/system/rankmapd.service"
expect "installed rankmapctl runs" sh -c "'$R/bin/rankmapctl' --help | grep -q report"
expect "installed rankmapd runs" sh -c "'$R/sbin/rankmapd' --help >/dev/null"
expect "installed example config is valid" sh -c "'$R/sbin/rankmapd' --config '$R/share/rankmap/examples/rankmapd.conf' --print-config >/dev/null 2>&1"
find "$T/opt" -type f | sort >"$T/installed"
expect "make uninstall PREFIX=/opt/rm DESTDIR=\$T" sh -c "make --no-print-directory B='$B' uninstall PREFIX=/opt/rm DESTDIR='$T' >'$T/ulog' 2>&1"
left=$(find "$T/opt" -type f)
expect "uninstall removes every file install wrote ($(wc -l <"$T/installed") files; left: ${left:-none})" test -z "$left"
expect "uninstall removes rankmap's own folders" test ! -e "$R/lib/rankmap" -a ! -e "$R/share/rankmap" -a ! -e "$R/share/doc/rankmap"
finish
