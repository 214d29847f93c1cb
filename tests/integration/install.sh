#!/bin/sh
# tests/integration/install.sh: `make install PREFIX=/usr DESTDIR=...` after a build for the default
# prefix installs what a packager ships, made for /usr: every program, library, example, manual page
# and the unit; the configuration under /etc (SYSCONFDIR's default for /usr); every path the unit, the
# manual pages' FILES and the examples name exists in the installed tree; no installed text names a
# source-tree path or a make variable; the SPANK plugin and rankmapd embed the installed directories;
# a second install rebuilds nothing and keeps an admin's changed /etc file (the shipped one beside it as
# .new); systemd-analyze verifies the unit (its man: pages found in the tree) and rates its exposure
# below 5; the installed rankmapd serves from the installed configuration and says READY=1 on
# NOTIFY_SOCKET once it answers. make runs in a copy of the build directory: the suite's build keeps
# its default prefix. `make uninstall` with the same PREFIX and DESTDIR then removes every file install
# wrote but the configuration the admin changed.
. "$(dirname "$0")/../lib.sh"
cd "$TOP" || exit 1
T=$(mktmp)
trap 'stop_rankmapd; [ -n "$N_PID" ] && kill "$N_PID" 2>/dev/null; rm -rf "$T"' EXIT
SAN=
ldd "$BIN/rankmapd" 2>/dev/null | grep -q libasan && SAN=SANITIZE=1
cp -a "$BIN" "$T/b" || exit 1
R=$T/root
inst() { make --no-print-directory B="$T/b" $SAN install PREFIX=/usr DESTDIR="$R" >"$T/$1" 2>&1; }
expect "make install PREFIX=/usr DESTDIR=\$T" inst log1
[ -f "$R/usr/sbin/rankmapd" ] || { cat "$T/log1"; finish; exit 1; }

for f in usr/bin/rankmapctl usr/sbin/rankmapd usr/lib/rankmap/librankmap_mpi_openmpi.so \
	usr/lib/rankmap/librankmap_mpi_mpich.so usr/lib/rankmap/spank_rankmap.so \
	usr/lib/systemd/system/rankmapd.service etc/rankmap/rankmapd.conf etc/rankmap/cluster.conf.example \
	etc/default/rankmapd usr/share/rankmap/examples/rankmapd.conf usr/share/rankmap/examples/torus.conf.example \
	usr/share/rankmap/examples/plugstack.conf.example usr/share/rankmap/examples/cluster.conf.example \
	usr/share/rankmap/examples/plafrim/hwloc/bonobo001.xml usr/share/rankmap/examples/plafrim/ib/ib-subnet0.txt \
	usr/share/doc/rankmap/README.md usr/share/doc/rankmap/PROTOCOL.md usr/share/man/man1/rankmapctl.1 \
	usr/share/man/man8/rankmapd.8 usr/share/man/man5/rankmapd.conf.5 usr/share/man/man8/spank_rankmap.8 \
	usr/share/man/man7/rankmap.7; do
	expect "installed /$f" test -s "$R/$f"
done
expect "nothing installed outside /usr and /etc" \
	test -z "$(find "$R" -mindepth 1 -maxdepth 1 ! -name usr ! -name etc)"
expect "the shipped configuration is the documented one" cmp -s conf/rankmapd.conf "$R/etc/rankmap/rankmapd.conf"

# exists PATH WHERE: PATH (an installed path) is in the tree.
exists() { expect "$2 names $1, installed" test -e "$R$1"; }
U=$R/usr/lib/systemd/system/rankmapd.service
for p in $(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p; s/^EnvironmentFile=-\{0,1\}//p; s/^Documentation=.*file:\/\/\([^ ]*\).*/\1/p' "$U"); do
	exists "$p" "the unit"
done
for m in $(sed -n 's/^Documentation=//p' "$U" | tr ' ' '\n' | sed -n 's/^man:\(.*\)(\([0-9]\))$/\1.\2/p'); do
	exists "/usr/share/man/man${m##*.}/$m" "the unit (man:)"
done
expect "the unit names man: pages" grep -q '^Documentation=man:rankmapd(8)' "$U"
expect "the unit waits for munged and says when it serves" \
	sh -c "grep -q '^After=.*munge.service' '$U' && grep -q '^Type=notify' '$U' && grep -q '^Before=slurmd.service' '$U'"
# the FILES sections of the installed pages: every path under /usr or /etc rankmap installs
for page in "$R"/usr/share/man/man*/*; do
	MANWIDTH=250 man -l "$page" 2>/dev/null | sed -n '/^FILES/,/^[A-Z]/p' |
		grep -o '/\(usr\|etc\)/[A-Za-z0-9_./*-]*' | sed 's/[.,]$//' | grep -v '^/etc/slurm' | sort -u >"$T/paths"
	expect "$(basename "$page") has a FILES section naming installed paths" test -s "$T/paths"
	while read -r p; do exists "$p" "$(basename "$page") FILES"; done <"$T/paths"
done
# the examples: the paths their settings name (rankmapd.conf only names a site's files, all commented)
for p in $(sed -n 's/^[a-z_]* = \(\/.*\)/\1/p' "$R/etc/rankmap/cluster.conf.example"); do
	exists "$p" "cluster.conf.example"
done
sed "s# = /usr/# = $R/usr/#" "$R/etc/rankmap/cluster.conf.example" >"$T/cluster.conf"
"$R/usr/bin/rankmapctl" report --cluster "$T/cluster.conf" >"$T/report" 2>&1
expect "the installed example cluster file loads (122 hosts with hardware)" grep -q 'hosts with hardware *122$' "$T/report"

# installed text files: no source-tree path, no make variable (the documents in doc/ describe the
# source tree, and compiled files carry debug information: both are left out)
git ls-files | grep / >"$T/tree"
find "$R" -type f ! -path "*/share/doc/*" -exec sh -c 'file -b "$1" | grep -q ELF || echo "$1"' _ {} \; >"$T/texts"
bad=$(xargs grep -lF -f "$T/tree" <"$T/texts" | head -3)
expect "no installed text names a source-tree path${bad:+: $bad}" test -z "$bad"
bad=$(xargs grep -l -e '\$([A-Z]*)' -e "$TOP" <"$T/texts" | head -3)
expect "no installed text names \$(VAR) or the build tree${bad:+: $bad}" test -z "$bad"
echo "conf/rankmapd.conf" >"$T/x"
expect "the source-path check can fail" grep -qF -f "$T/tree" "$T/x"

# what embeds a directory was rebuilt for /usr
expect "the SPANK plugin's built-in libdir is /usr/lib/rankmap" \
	sh -c "grep -aq /usr/lib/rankmap '$R/usr/lib/rankmap/spank_rankmap.so' && ! grep -aq /usr/local/lib/rankmap '$R/usr/lib/rankmap/spank_rankmap.so'"
expect "the suite's plugin (default prefix) embeds /usr/local/lib/rankmap" \
	grep -aq /usr/local/lib/rankmap "$BIN/spank_rankmap.so"
expect "rankmapd's default configuration is /etc/rankmap/rankmapd.conf" \
	sh -c "'$R/usr/sbin/rankmapd' --help | grep -q 'default /etc/rankmap/rankmapd.conf'"
expect "the unit runs /usr/sbin/rankmapd and reads /etc/default/rankmapd" \
	sh -c "grep -q '^ExecStart=/usr/sbin/rankmapd ' '$U' && grep -q '^EnvironmentFile=-/etc/default/rankmapd' '$U'"
expect "the plugstack example loads /usr/lib/rankmap/spank_rankmap.so" \
	grep -q '^required /usr/lib/rankmap/spank_rankmap.so ' "$R/usr/share/rankmap/examples/plugstack.conf.example"

# a second install: nothing rebuilt; a changed /etc file kept, the shipped one beside it
echo "log_level = debug" >>"$R/etc/rankmap/rankmapd.conf"
cp "$R/etc/rankmap/rankmapd.conf" "$T/mine"
expect "make install again" inst log2
expect "the second install compiles nothing" sh -c "! grep -q '^cc ' '$T/log2'"
expect "an admin's rankmapd.conf is kept" cmp -s "$T/mine" "$R/etc/rankmap/rankmapd.conf"
expect "the shipped rankmapd.conf goes beside it as .new" cmp -s conf/rankmapd.conf "$R/etc/rankmap/rankmapd.conf.new"
expect "and the install says so" grep -q 'rankmapd.conf exists and differs' "$T/log2"
expect "an unchanged file gets no .new" test ! -e "$R/etc/default/rankmapd.new"

# systemd-analyze: the unit as installed, with its programs' paths in the tree and its man pages found
if command -v systemd-analyze >/dev/null 2>&1; then
	sed "s#^\(Exec[A-Za-z]*=\)/usr/#\1$R/usr/#" "$U" >"$T/rankmapd.service"
	out=$(cd "$T" && MANPATH="$R/usr/share/man" systemd-analyze verify "$T/rankmapd.service" 2>&1)
	expect "systemd-analyze verify: no complaint${out:+: $out}" test -z "$out"
	printf '[Service]\nExecStart=/nonexistent/x\nBogusKey=1\n' >"$T/bad.service"
	out=$(cd "$T" && systemd-analyze verify "$T/bad.service" 2>&1)
	expect "systemd-analyze verify complains about a bad unit" test -n "$out"
	score=$(systemd-analyze security --offline=yes "$U" 2>&1 | sed -n 's/.*Overall exposure level for rankmapd.service: \([0-9.]*\).*/\1/p')
	expect "systemd-analyze security: exposure ${score:-?} is below 5" awk -v s="$score" 'BEGIN { exit !(s != "" && s < 5) }'
else
	skip "systemd-analyze is not installed (systemd, make deps): the unit is not verified"
fi

# the installed rankmapd, on the installed configuration (its socket and state moved into $T), says
# READY=1 on NOTIFY_SOCKET when it answers, and STOPPING=1 when stopped
mkdir -m 700 "$T/state"
python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind(sys.argv[1]); s.settimeout(60)
out = open(sys.argv[2], "w")
for _ in range(2):
    try: out.write(s.recv(4096).decode() + "\n---\n"); out.flush()
    except socket.timeout: break
' "$T/notify" "$T/notified" &
N_PID=$!
n=0
while [ ! -S "$T/notify" ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
NOTIFY_SOCKET=$T/notify "$R/usr/sbin/rankmapd" --config "$R/etc/rankmap/rankmapd.conf" --socket "$T/sock" \
	--state-dir "$T/state" --foreground >"$T/d.log" 2>&1 &
D_PID=$!
n=0
while ! grep -q READY=1 "$T/notified" 2>/dev/null && [ $n -lt 300 ]; do sleep 0.1; n=$((n + 1)); done
expect "the installed rankmapd says READY=1" grep -q '^READY=1' "$T/notified"
expect "once READY=1 is said, it answers" "$R/usr/bin/rankmapctl" ping --socket "$T/sock" --timeout 2000
expect "READY=1 comes with its STATUS" grep -q "^STATUS=serving unix $T/sock" "$T/notified"
kill "$D_PID"
wait "$D_PID"
expect "rankmapd stops cleanly" test $? -eq 0
D_PID=
wait "$N_PID"
N_PID=
expect "and says STOPPING=1" grep -q '^STOPPING=1' "$T/notified"

# make uninstall: every installed file goes but the /etc file the admin changed above
find "$R" -type f | sort >"$T/installed"
expect "make uninstall PREFIX=/usr DESTDIR=\$T" \
	sh -c "make --no-print-directory B='$T/b' $SAN uninstall PREFIX=/usr DESTDIR='$R' >'$T/ulog' 2>&1"
left=$(find "$R" -type f | sed "s#^$R##")
expect "uninstall removes every file install wrote but the admin's ($(wc -l <"$T/installed") files; left: ${left:-none})" \
	test "$left" = /etc/rankmap/rankmapd.conf
expect "and says it kept it" grep -q 'rankmapd.conf differs from the shipped file (changed by the admin): kept' "$T/ulog"
expect "uninstall removes rankmap's own folders" \
	test ! -e "$R/usr/lib/rankmap" -a ! -e "$R/usr/share/rankmap" -a ! -e "$R/usr/share/doc/rankmap"
finish
