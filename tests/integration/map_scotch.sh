#!/bin/sh
# tests/integration/map_scotch.sh: Scotch on the bundled example cluster. These inputs used
# to kill rankmapctl with SIGSEGV (32x32) or hang it for good (30x30): the decomposition-defined
# target's distances times the edge loads wrapped 32-bit SCOTCH_Num, Scotch's diffusion bipartitioner
# aborted on NaN, and its threads then desynchronised their barriers (see mapping/scotch.c). Each case,
# with scotch and auto: exit 0 within the timeout (no signal, no hang), a bijection onto distinct
# slots, cost <= identity. One case runs under valgrind, which must report no error at all.
. "$(dirname "$0")/../lib.sh"

R="$BIN/rankmapctl"
C="$DATA/example/cluster.conf"
T=$(mktmp)
trap 'rm -rf "$T"' EXIT INT TERM

# the checker must reject what it is meant to catch
printf '0\n1\n1\n' >"$T/dup.perm"
printf '0\n1\n9\n' >"$T/range.perm"
! is_perm "$T/dup.perm" 3 4 && ! is_perm "$T/range.perm" 3 4 && is_perm "$T/range.perm" 3 10 &&
	ok "is_perm rejects duplicates and out-of-range slots" || notok "is_perm checker"

# case: name, cart, ranks, then extra map arguments
run_case() {
	name=$1 cart=$2 n=$3
	shift 3
	for a in scotch auto; do
		extra=""
		[ $a = auto ] && extra="--budget 1000"
		# shellcheck disable=SC2086
		timeout -k 5 120 "$R" map --cart "$cart" --cluster "$C" "$@" --algo $a $extra --out "$T/p.perm" \
			--json >"$T/p.json" 2>"$T/p.err"
		rc=$?
		if [ $rc -ne 0 ]; then
			notok "$name $a: exit $rc ($(head -c 300 "$T/p.err"))"
			continue
		fi
		s=$(json_num slots "$T/p.json")
		c=$(json_num cost "$T/p.json")
		i=$(json_num identity_cost "$T/p.json")
		if is_perm "$T/p.perm" "$n" "$s" && awk -v c="$c" -v i="$i" 'BEGIN { exit !(c != "" && c <= i) }'; then
			ok "$name $a: bijection of $n ranks onto $s slots, cost $c <= identity $i"
		else
			notok "$name $a: permutation or cost ($c vs identity $i)"
		fi
	done
}

run_case "example 32x32" 32x32 1024
run_case "example 30x30" 30x30 900
run_case "example 36x36" 36x36 1296
run_case "example 16x16" 16x16 256
run_case "example 22x22, mixed hosts" 22x22 484 --hosts 'fourmi[001-020],mirabelle[001-016],riri,bonobo[001-013]'
run_case "example 8x8, riri + fourmi" 8x8 64 --hosts 'riri,fourmi[001-004]'
run_case "example 12x10, every node type" 12x10:1,1:10,1 120 \
	--hosts 'devel01,devel03,fourmi012,mirage[001-002],bonobo001,mirabelle009,fifi,riri'
run_case "example 8x12 per PU, mixed" 8x12 96 --per-pu --hosts 'devel01,mirage[001-004],bonobo[001-004]'

# one of them under valgrind: Scotch must not read uninitialised or freed memory (it did, in its
# threaded diffusion bipartitioner, before it was given bounded loads and one thread)
if ldd "$R" 2>/dev/null | grep -q libasan; then
	echo "# valgrind not run on an ASan build (ASan checks these runs instead)"
elif command -v valgrind >/dev/null 2>&1; then
	timeout -k 5 300 valgrind -q --error-exitcode=99 "$R" map --cart 30x30 --cluster "$C" --algo scotch \
		--out "$T/v.perm" >/dev/null 2>"$T/v.err"
	rc=$?
	[ $rc -eq 0 ] && is_perm "$T/v.perm" 900 1308 && ok "valgrind: scotch on the example 30x30, no error" ||
		notok "valgrind: exit $rc ($(grep -m 3 '==' "$T/v.err"))"
else
	notok "valgrind is not installed (make deps installs it)"
fi

finish
