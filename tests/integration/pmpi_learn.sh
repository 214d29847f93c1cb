#!/bin/sh
# RANKMAP_LEARN under Open MPI and MPICH, with the per-user directory and with a real rankmapd:
# the first run learns, the second uses the learned pattern (report: learned=<id>) and keeps the heavy
# dimension inside hosts; `rankmapctl patterns` lists, shows and forgets; a second user (created here)
# never receives the first user's pattern; a rebuilt program (another build-id) does not reuse the old
# pattern beyond its first run; bad input (corrupt, truncated or oversized store file, a directory owned
# by someone else or world-writable, a full disk, a daemon that dies between lookup and store) gives one warning and
# the job runs on. A graph call (ring of rings, MPI_Graph_create) learns per edge. `rankmapctl explain
# --learned` names the pattern a mapping used (from the report line), its runs and non-neighbour traffic.
#
# The job: cart_halo -p on a 4x2 open grid, 8 ranks on 2 virtual hosts of 4 cores, block placement. Its
# traffic phase loads one dimension (0, or 1 in a rebuilt copy). Unweighted, block placement is already a
# best cut (dimension 0 crosses hosts twice, pmpi_trace.sh's control); with the learned pattern the heavy
# dimension must not cross at all.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/mpi/common.sh"
pmpi_check_built
T=$(mktmp)
chmod 755 "$T"
rankmapd_on_exit() { for d in "$T"/full-*; do mountpoint -q "$d" 2>/dev/null && umount "$d"; done; }
rankmapd_cleanup "$T"
CTL=$BIN/rankmapctl
export RANKMAP_FAKE_HOSTS=2 RANKMAP_FAKE_NODE='core:4'
GRID="2 4 2 0 0"

# job M PROG-DIR ARGS...: one learning run of cart_halo (or $PROG) with the report in $T/report
job() {
	_m=$1; shift
	rm -f "$T/report"
	RANKMAP_LEARN=1 RANKMAP_REPORT=$T/report pmpi_run "$_m" 8 cart_halo "$@" >"$T/out" 2>"$T/err"
}
learned() { field learned "$T/report"; }
check_run() { # DESC: exit 0, halo checks passed, no warning
	[ "$(field errors "$T/out")" = 0 ] && [ "$(warnings "$T/err")" -eq 0 ] && ok "$1" ||
		{ notok "$1: $(cat "$T/out") $(grep rankmap "$T/err" | head -3)"; }
}

for m in $PMPI_MPIS; do
	# ---- per-user directory -------------------------------------------------------------------------
	export RANKMAP_LEARN_DIR=$T/learn-$m
	job "$m" -p $GRID
	check_run "$m: first learning run completes"
	[ "$(learned)" = none ] && ok "$m: first run: no learned pattern yet" || notok "$m: first run: learned=$(learned)"
	[ "$(field cross0_mapped "$T/out")" = 2 ] && ok "$m: first run: unweighted, dimension 0 crosses hosts twice" ||
		notok "$m: first run: $(cat "$T/out")"
	n=$(ls "$RANKMAP_LEARN_DIR"/*.pattern 2>/dev/null | wc -l)
	[ "$n" = 1 ] && ok "$m: one pattern stored" || notok "$m: $n patterns in $RANKMAP_LEARN_DIR"
	[ "$(stat -c %a "$RANKMAP_LEARN_DIR")" = 700 ] && ok "$m: directory created 0700" || notok "$m: mode $(stat -c %a "$RANKMAP_LEARN_DIR")"
	job "$m" -p $GRID
	check_run "$m: second run completes"
	id=$(learned | cut -d/ -f1)
	case $(learned) in ????????????????/runs=1) ok "$m: second run uses the learned pattern ($(learned))" ;;
	*) notok "$m: second run: learned=$(learned)" ;; esac
	[ "$(field cross0_mapped "$T/out")" = 0 ] && ok "$m: learned pattern keeps dimension 0 inside hosts (2 -> 0)" ||
		notok "$m: second run: $(cat "$T/out")"
	"$CTL" patterns list >"$T/list" 2>&1 && grep -q "^$id .*MPI_Cart_create" "$T/list" &&
		ok "$m: patterns list shows $id" || notok "$m: patterns list: $(cat "$T/list")"
	"$CTL" patterns show "$id" >"$T/show" 2>&1 && grep -q 'runs merged    2' "$T/show" &&
		ok "$m: patterns show: 2 runs merged" || notok "$m: show: $(cat "$T/show")"
	"$CTL" patterns show "$id" --json >"$T/show.json" 2>&1
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); w=[x["weight"] for x in d["dims"]]; sys.exit(not (w[0]==1 and w[1]<0.1 and d["runs"]==2))' \
		"$T/show.json" && ok "$m: show --json: dimension 0 weighs 1, dimension 1 < 0.1" || notok "$m: show --json: $(cat "$T/show.json")"
	# explain names the pattern the mapping used (the report's learned=ID/runs=N), its runs and its weights
	"$CTL" explain --learned "$(learned)" --cart 4x2:0,0 --topology 'tleaf 2 2 10 4 1' >"$T/ex" 2>&1 &&
		grep -q "^learned pattern $id: MPI_Cart_create" "$T/ex" && grep -q 'runs merged 2,' "$T/ex" &&
		grep -q 'not neighbours' "$T/ex" && ok "$m: explain --learned names $id, its runs and non-neighbour traffic" ||
		notok "$m: explain --learned: $(cat "$T/ex")"
	"$CTL" explain --learned auto --cart 4x2:0,0 --topology 'tleaf 2 2 10 4 1' --json >"$T/ex.json" 2>&1
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); l=d["learned"]; r=d["levels"][0]
sys.exit(not (l["pattern"]==sys.argv[2] and l["runs"]==2 and l["weights"][0]==1 and l["weights"][1]<0.1 and r["after"]<r["before"]))' \
		"$T/ex.json" "$id" && ok "$m: explain --learned auto --json: the same pattern, its weights move traffic off the network" ||
		notok "$m: explain --json: $(cat "$T/ex.json")"
	expect_fail "$m: explain --learned with a shape the pattern does not fit" \
		"$CTL" explain --learned "$id" --cart 4x2:1,1 --topology 'tleaf 2 2 10 4 1'

	# ---- a graph call (MPI_Graph_create, no weights): learned per edge ------------------------------
	for i in 1 2; do
		rm -f "$T/report"
		RANKMAP_LEARN=1 RANKMAP_REPORT=$T/report pmpi_run "$m" 8 ring_of_rings 2 4 >"$T/out" 2>"$T/err"
	done
	case $(learned) in ????????????????/runs=1) ok "$m: ring of rings (MPI_Graph_create): learned per edge" ;;
	*) notok "$m: ring of rings: learned=$(learned) $(cat "$T/err" | head -3)" ;; esac
	gid=$(learned | cut -d/ -f1)
	"$CTL" patterns show "$gid" >"$T/show" 2>&1 && grep -q 'Heaviest edges of 18' "$T/show" &&
		ok "$m: patterns show: heaviest edges of the graph" || notok "$m: graph show: $(cat "$T/show")"

	# ---- a rebuilt program: another build-id, another pattern ---------------------------------------
	cc_m=mpicc.$m
	PROG_DIR=$T/prog-$m; mkdir -p "$PROG_DIR"
	# cyclic placement: every edge of dimension 1 crosses hosts, none of dimension 0
	appjob() { rm -f "$T/report"; RANKMAP_LEARN=1 RANKMAP_REPORT=$T/report PMPI_PROG=$PROG_DIR/app \
		RANKMAP_FAKE_PLACEMENT=cyclic run_prog "$m" -p $GRID; }
	run_prog() { _m=$1; shift; _lib=$(pmpi_lib "$_m")
		case $_m in
		openmpi) timeout -k 5 "$PMPI_TIMEOUT" mpirun.openmpi --oversubscribe --allow-run-as-root -np 8 \
				-x LD_PRELOAD="$_lib" "$PMPI_PROG" "$@" ;;
		mpich) timeout -k 5 "$PMPI_TIMEOUT" mpirun.mpich -np 8 -genv LD_PRELOAD "$_lib" "$PMPI_PROG" "$@" ;;
		esac >"$T/out" 2>"$T/err"; }
	OMPI_CC=cc MPICH_CC=cc $cc_m -O2 -Wno-stringop-overflow -o "$PROG_DIR/app" "$TOP/tests/mpi/cart_halo.c" -lm
	appjob; appjob
	case $(learned) in ????????????????/runs=1) ok "$m: app (traffic on dimension 0) learned" ;;
	*) notok "$m: app: learned=$(learned) $(cat "$T/out")" ;; esac
	OMPI_CC=cc MPICH_CC=cc $cc_m -O2 -Wno-stringop-overflow -DCART_HALO_TRAFFIC_DIM=1 -o "$PROG_DIR/app" "$TOP/tests/mpi/cart_halo.c" -lm
	appjob
	[ "$(learned)" = none ] && ok "$m: rebuilt app (traffic on dimension 1): the old pattern is not reused" ||
		notok "$m: rebuilt app reused learned=$(learned)"
	appjob
	case $(learned) in ????????????????/runs=1) ok "$m: rebuilt app: its own pattern from its second run" ;;
	*) notok "$m: rebuilt app, second run: learned=$(learned)" ;; esac
	[ "$(field crossT_identity "$T/out")" -gt 0 ] && [ "$(field crossT_mapped "$T/out")" = 0 ] &&
		ok "$m: rebuilt app: dimension 1 kept inside hosts" || notok "$m: rebuilt app: $(cat "$T/out")"
	unset RANKMAP_LEARN_DIR
done

# ---- rankmapd ---------------------------------------------------------------------------------------
[ -x "$BIN/rankmapd" ] || { notok "$BIN/rankmapd not built"; finish; exit 1; }
SOCK=$T/sock
cat >"$T/rankmapd.conf" <<EOC
hwloc_dir = $DATA/daemon/hwloc
ib_file = $DATA/plafrim/ib/ib-subnet0.txt
EOC
start_rankmapd "$T/rankmapd.conf" "$SOCK" "$T/d.log" --state-dir "$T/state"
expect "rankmapd is up" "$CTL" ping --socket "$SOCK"
chmod 711 "$T/state"
for m in $PMPI_MPIS; do
	export RANKMAP_SOCKET=$SOCK RANKMAP_LEARN_DIR=$T/unused-$m
	job "$m" -p $GRID
	check_run "$m, rankmapd: first learning run completes"
	grep -q 'algo=rankmapd:\|algo=current' "$T/report" && [ "$(learned)" = none ] &&
		ok "$m, rankmapd: mapped through the daemon, no learned pattern yet" || notok "$m, rankmapd: $(cat "$T/report")"
	job "$m" -p $GRID
	check_run "$m, rankmapd: second run completes"
	case $(learned) in ????????????????/runs=1) ok "$m, rankmapd: second run uses the pattern the daemon keeps" ;;
	*) notok "$m, rankmapd: second run: learned=$(learned)" ;; esac
	[ "$(field cross0_mapped "$T/out")" = 0 ] && ok "$m, rankmapd: dimension 0 inside hosts" ||
		notok "$m, rankmapd: $(cat "$T/out")"
	id=$(learned | cut -d/ -f1)
	[ -f "$T/state/patterns/0/$id.pattern" ] && ok "$m, rankmapd: stored under state_dir/patterns/0" ||
		notok "$m, rankmapd: $(find "$T/state" -name '*.pattern')"
	[ ! -e "$RANKMAP_LEARN_DIR" ] && ok "$m, rankmapd: nothing written to the per-user directory" ||
		notok "$m, rankmapd: $RANKMAP_LEARN_DIR was written"
	"$CTL" patterns show "$id" --socket "$SOCK" >"$T/show" 2>&1 && grep -q 'runs merged    2' "$T/show" &&
		ok "$m, rankmapd: patterns show --socket" || notok "$m, rankmapd: show: $(cat "$T/show")"
	"$CTL" explain --learned "$(learned)" --cart 4x2:0,0 --socket "$SOCK" --hosts bonobo001 >"$T/ex" 2>&1 &&
		grep -q "^learned pattern $id: .*runs merged 2\|^  runs merged 2," "$T/ex" && grep -q "^learned pattern $id" "$T/ex" &&
		ok "$m, rankmapd: explain --learned --socket reads the daemon's pattern" || notok "$m, rankmapd: explain: $(cat "$T/ex")"
	unset RANKMAP_SOCKET RANKMAP_LEARN_DIR
done

# ---- a second user ----------------------------------------------------------------------------------
U=rmlearn
id -u "$U" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$U" 2>/dev/null
if ! id -u "$U" >/dev/null 2>&1 || ! command -v setpriv >/dev/null 2>&1; then
	notok "cannot create user $U or run setpriv: the two-user checks did not run"
else
	UID2=$(id -u "$U")
	AS_U="setpriv --reuid=$U --regid=$(id -g "$U") --clear-groups"
	mkdir -p "$T/home-$U" && chown "$U" "$T/home-$U"
	# the job as user $U: MPI [SOCKET] (common.sh clears RANKMAP_*: set them after it)
	cat >"$T/asuser.sh" <<EOS
BIN='$BIN'; TOP='$TOP'; . '$TOP/tests/mpi/common.sh'
export RANKMAP_FAKE_HOSTS=2 RANKMAP_FAKE_NODE='core:4' RANKMAP_LEARN=1 RANKMAP_REPORT='$T/report'
[ -n "\$2" ] && export RANKMAP_SOCKET="\$2"
pmpi_run "\$1" 8 cart_halo -p $GRID
EOS
	for m in $PMPI_MPIS; do
		rm -f "$T/report"; touch "$T/report"; chown "$U" "$T/report"
		$AS_U env HOME="$T/home-$U" sh "$T/asuser.sh" "$m" "$SOCK" >"$T/out" 2>"$T/err"
		[ "$(field errors "$T/out")" = 0 ] && [ "$(learned)" = none ] &&
			ok "$m: user $U, same program, through rankmapd: root's pattern is not served" ||
			notok "$m: user $U: learned=$(learned) $(cat "$T/out") $(head -3 "$T/err")"
		rm -f "$T/report"; touch "$T/report"; chown "$U" "$T/report"
		$AS_U env HOME="$T/home-$U" sh "$T/asuser.sh" "$m" "" >"$T/out" 2>"$T/err"
		[ "$(field errors "$T/out")" = 0 ] && [ "$(learned)" = none ] &&
			ok "$m: user $U, without a daemon: no pattern (its own ~/.cache/rankmap)" ||
			notok "$m: user $U, directory: learned=$(learned) $(head -3 "$T/err")"
	done
	[ -n "$(ls "$T/home-$U/.cache/rankmap/"*.pattern 2>/dev/null)" ] && ok "user $U learned in its own ~/.cache/rankmap" ||
		notok "user $U: nothing in $T/home-$U/.cache/rankmap"
	$AS_U "$CTL" patterns list --socket "$SOCK" --json >"$T/ulist" 2>&1
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not (d["patterns"] and all(p["uid"]==int(sys.argv[2]) for p in d["patterns"])))' \
		"$T/ulist" "$UID2" && ok "user $U lists only its own patterns through rankmapd" || notok "user $U list: $(cat "$T/ulist")"
	expect_fail "user $U may not list every user's patterns" $AS_U "$CTL" patterns list --all --socket "$SOCK"
	"$CTL" patterns list --all --socket "$SOCK" --json >"$T/alist" 2>&1
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); u={p["uid"] for p in d["patterns"]}; sys.exit(u!={0,int(sys.argv[2])})' \
		"$T/alist" "$UID2" && ok "root lists both users' patterns" || notok "root --all: $(cat "$T/alist")"
	"$CTL" patterns forget all --uid "$UID2" --socket "$SOCK" >/dev/null 2>&1 &&
		[ -z "$(ls "$T/state/patterns/$UID2/" 2>/dev/null)" ] && ok "root purges user $U's patterns" || notok "root purge"
fi

# ---- bad input: one warning, the job runs on, nothing lost -------------------------------------------
one_warning() { # DESC PATTERN
	[ "$(field errors "$T/out")" = 0 ] && [ "$(warnings "$T/err")" -eq 1 ] && grep -q "^rankmap: learn: .*$2" "$T/err" &&
		ok "$1: one warning: $(grep '^rankmap' "$T/err")" ||
		notok "$1: $(cat "$T/out") warnings=$(warnings "$T/err"): $(grep rankmap "$T/err" | head -3)"
}
for m in $PMPI_MPIS; do
	export RANKMAP_LEARN_DIR=$T/bad-$m
	job "$m" -p $GRID; job "$m" -p $GRID
	f=$(ls "$RANKMAP_LEARN_DIR"/*.pattern)
	cp "$f" "$T/good.pattern"
	printf 'rankmap-pattern = 1\nuid = 0\x01\x02garbage\n' >"$f"
	job "$m" -p $GRID
	one_warning "$m: corrupt store file" "field 'uid'"
	[ "$(learned)" = none ] && ok "$m: corrupt file: not applied" || notok "$m: corrupt file applied: $(learned)"
	[ -f "$f.bad" ] && grep -q garbage "$f.bad" && grep -q 'runs = 1' "$f" &&
		ok "$m: corrupt file kept as .bad, replaced by this run's pattern" || notok "$m: after corrupt: $(ls "$RANKMAP_LEARN_DIR")"
	head -c 200 "$T/good.pattern" >"$f"
	job "$m" -p $GRID
	one_warning "$m: truncated store file" "truncated"
	# a store file far above its cap: refused before it is read
	{ cat "$T/good.pattern"; i=0; while [ $i -lt 2000 ]; do echo "# padding padding padding padding padding padding"; i=$((i + 1)); done; } >"$f"
	RANKMAP_FILE_LIMIT_PATTERN=16K job "$m" -p $GRID
	one_warning "$m: store file above RANKMAP_FILE_LIMIT_PATTERN" "too large\\|limit"
	# the store directory: world-writable, then owned by another user
	chmod 777 "$RANKMAP_LEARN_DIR"
	job "$m" -p $GRID
	one_warning "$m: world-writable store directory refused" "refused"
	chmod 700 "$RANKMAP_LEARN_DIR"
	if id -u rmlearn >/dev/null 2>&1; then
		chown rmlearn "$RANKMAP_LEARN_DIR"
		job "$m" -p $GRID
		one_warning "$m: store directory owned by another user refused" "refused: owned by uid"
		chown 0 "$RANKMAP_LEARN_DIR"
	fi
	cp "$T/good.pattern" "$f"
	job "$m" -p $GRID
	check_run "$m: good file back: no warning"
	case $(learned) in ????????????????/runs=2) ok "$m: the kept pattern serves again ($(learned))" ;;
	*) notok "$m: after restoring: learned=$(learned)" ;; esac

	# a full disk while storing (a 64k tmpfs, filled): the stored pattern serves, one warning, the old
	# file stays intact and no temporary file is left
	FULL=$T/full-$m; mkdir -p "$FULL"
	if mount -t tmpfs -o size=64k,mode=700 tmpfs "$FULL"; then
		cp "$f" "$FULL/"; pf=$FULL/$(basename "$f"); sum=$(md5sum <"$pf")
		dd if=/dev/zero of="$FULL/fill" bs=4k 2>/dev/null
		RANKMAP_LEARN_DIR=$FULL job "$m" -p $GRID
		one_warning "$m: full disk while storing" "not stored"
		case $(learned) in ????????????????/runs=*) ok "$m: full disk: the stored pattern still served ($(learned))" ;;
		*) notok "$m: full disk: learned=$(learned)" ;; esac
		[ "$(md5sum <"$pf")" = "$sum" ] && [ "$(ls -A "$FULL" | grep -cv '^fill$')" = 1 ] &&
			ok "$m: full disk: the old file intact, no temporary left" || notok "$m: full disk: $(ls -A "$FULL")"
		umount "$FULL"
	else
		notok "$m: cannot mount a tmpfs on $FULL: the full-disk check did not run"
	fi

	# a daemon that dies between the lookup (MPI_Cart_create) and the store (MPI_Finalize)
	rm -rf "$T/fallback-$m"; export RANKMAP_LEARN_DIR=$T/fallback-$m
	# (-w: the ranks wait after MPI_Cart_create until $T/go exists, while the daemon is killed)
	rm -f "$T/report" "$T/go"
	RANKMAP_SOCKET=$SOCK RANKMAP_LEARN=1 RANKMAP_REPORT=$T/report pmpi_run "$m" 8 cart_halo -w "$T/go" -p $GRID \
		>"$T/out" 2>"$T/err" &
	JOB=$!
	n=0; while [ $n -lt 600 ] && [ ! -s "$T/report" ]; do sleep 0.05; n=$((n + 1)); done
	term_rankmapd
	touch "$T/go"
	wait "$JOB"
	# (-w: another command line at the same size, so the pattern is found but not applied: input-changed)
	case $(learned) in ????????????????/runs=*|????????????????:input-changed/runs=*) ok "$m: lookup served by rankmapd before it died" ;;
	*) notok "$m: daemon dying: learned=$(learned)" ;; esac
	one_warning "$m: daemon died before the store" "stored in $RANKMAP_LEARN_DIR instead"
	[ -n "$(ls "$RANKMAP_LEARN_DIR"/*.pattern 2>/dev/null)" ] && ok "$m: the run's pattern kept in the per-user directory" ||
		notok "$m: pattern lost"
	start_rankmapd "$T/rankmapd.conf" "$SOCK" "$T/d.log" --state-dir "$T/state"
	unset RANKMAP_LEARN_DIR
done

# ---- persistent sends (tracer18): MPI_Send_init/Ssend_init/Bsend_init/Rsend_init started by MPI_Start and
# MPI_Startall count one message of their bytes per start; persistent receives count nothing; plain sends
# of changing counts count exactly (the learning cache). persist_halo (tests/mpi/persist_halo.c) prints
# what it sent on its 3x2 grid per rank and direction; the learned pattern must hold exactly that, and so
# the per-dimension weights their ratio. One run per MPI.
persist_case() {
	for m in $PMPI_MPIS; do
		[ -x "$BIN/tests/mpi/$m/persist_halo" ] || { notok "$BIN/tests/mpi/$m/persist_halo is not built"; continue; }
		export RANKMAP_LEARN_DIR=$T/persist-$m
		RANKMAP_LEARN=1 pmpi_run "$m" 6 persist_halo 3 2 1 0 20 >"$T/out" 2>"$T/err"
		pid=$("$CTL" patterns list --json 2>/dev/null | python3 -c 'import json,sys; p=json.load(sys.stdin)["patterns"]; print(p[0]["pattern"] if len(p) == 1 else "")')
		"$CTL" patterns show "$pid" --json >"$T/pshow.json" 2>&1
		if python3 - "$T/out" "$T/pshow.json" <<'EOP'; then
import json, re, sys
m = re.search(r"expect dim0=(\S+) dim1=(\S+) errors=0", open(sys.argv[1]).read())
if not m:
    sys.exit("the program failed: " + open(sys.argv[1]).read())
want = [[float(x) for x in g.split(",")] for g in m.groups()]  # bytes -1, +1, msgs -1, +1 per dimension
got = json.load(open(sys.argv[2]))["dims"]
keys = ("bytes_minus", "bytes_plus", "msgs_minus", "msgs_plus")
for d in (0, 1):
    for k, w in zip(keys, want[d]):
        if abs(got[d][k] - w) > 1e-6 * max(1.0, w):
            sys.exit("dim %d %s: learned %g, the program sent %g" % (d, k, got[d][k], w))
ratio = (want[1][0] + want[1][1]) / (want[0][0] + want[0][1])  # dimension 0 is the heavier
if abs(got[0]["weight"] - 1) > 1e-9 or abs(got[1]["weight"] - ratio) > 1e-6:
    sys.exit("weights %g %g, expected 1 %g" % (got[0]["weight"], got[1]["weight"], ratio))
EOP
			ok "$m: persistent sends learned exactly per dimension and direction (weights 1 : $(python3 -c "import json; print(json.load(open('$T/pshow.json'))['dims'][1]['weight'])"))"
		else
			notok "$m: persistent sends: $(head -c 600 "$T/pshow.json") $(head -3 "$T/err")"
		fi
		unset RANKMAP_LEARN_DIR
	done
}
persist_case
# ---- input files: the same arguments naming changed files are another input --------------
# The arguments name a file plainly (a.dat) and as --in=b.dat; a FIFO and /dev/zero among them must not
# be opened (the job would block or read forever). A pattern is applied to the same arguments and the same
# files; not (input-changed) when a.dat's first bytes or b.dat's last bytes change at the same size; and
# applied again to a second run of the changed files. (Standard input as a file is not checked: under
# mpirun the ranks' standard input is a pipe or /dev/null.)
input_case() {
	mkfifo "$T/fifo"
	for m in $PMPI_MPIS; do
		export RANKMAP_LEARN_DIR=$T/inputs-$m
		# (files of one letter, each change writes another: a random byte could equal the one written)
		head -c 12288 /dev/zero | tr '\0' a >"$T/a.dat"; head -c 9000 /dev/zero | tr '\0' b >"$T/b.dat"
		args="-p --in=$T/b.dat $GRID $T/a.dat $T/fifo /dev/zero"
		job "$m" $args; check_run "$m: inputs: a job whose arguments name a FIFO and /dev/zero runs"
		job "$m" $args
		case $(learned) in ????????????????/runs=1) ok "$m: inputs: the same files, the pattern applied ($(learned))" ;;
		*) notok "$m: inputs, same files: learned=$(learned) $(head -3 "$T/err")" ;; esac
		printf 'X' | dd of="$T/a.dat" bs=1 seek=10 conv=notrunc 2>/dev/null
		job "$m" $args
		case $(learned) in ????????????????:input-changed/runs=2) ok "$m: inputs: FILE's first bytes changed, not applied ($(learned))" ;;
		*) notok "$m: inputs, a.dat changed: learned=$(learned)" ;; esac
		job "$m" $args
		case $(learned) in ????????????????/runs=3) ok "$m: inputs: the changed files again, applied ($(learned))" ;;
		*) notok "$m: inputs, a.dat again: learned=$(learned)" ;; esac
		printf 'X' | dd of="$T/b.dat" bs=1 seek=8990 conv=notrunc 2>/dev/null
		job "$m" $args
		case $(learned) in ????????????????:input-changed/runs=4) ok "$m: inputs: --in=FILE's last bytes changed, not applied ($(learned))" ;;
		*) notok "$m: inputs, b.dat changed: learned=$(learned)" ;; esac
		check_run "$m: inputs: the last run completes"
		unset RANKMAP_LEARN_DIR
	done
}
input_case
# ---- ranks that disagree: RANKMAP_LEARN=1 in rank 0's environment only ---------------------
# Learning records a communicator only when every rank of the call can (agreed in the call's one
# allreduce): the job completes with correct neighbours, no record is stored, and the learning rank warns
# once. (A library that let the learning ranks run a collective of their own here left the job hanging.)
disagree_case() {
	for m in $PMPI_MPIS; do
		dir=$T/disagree-$m
		pmpi_run_rank "$m" 8 0 "RANKMAP_LEARN=1 RANKMAP_LEARN_DIR=$dir" cart_halo -p $GRID >"$T/out" 2>"$T/err"
		rc=$?
		[ $rc = 0 ] && [ "$(field errors "$T/out")" = 0 ] && ok "$m: only rank 0 learning: the job completes, neighbours correct" ||
			notok "$m: only rank 0 learning: exit $rc $(cat "$T/out") $(head -3 "$T/err")"
		[ -z "$(ls "$dir"/*.pattern 2>/dev/null)" ] && ok "$m: only rank 0 learning: nothing recorded" ||
			notok "$m: only rank 0 learning: $(ls "$dir")"
		[ "$(warnings "$T/err")" -eq 1 ] && grep -q 'RANKMAP_LEARN: set on some ranks' "$T/err" &&
			ok "$m: only rank 0 learning: one warning ($(grep -m1 RANKMAP_LEARN "$T/err"))" ||
			notok "$m: only rank 0 learning: warnings: $(cat "$T/err")"
	done
}
disagree_case
finish
