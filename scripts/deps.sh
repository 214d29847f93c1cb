#!/bin/sh
# Install the Debian packages rankmap needs; skip everything already installed. Every test dependency is
# here (libsimgrid-dev: smpicc and smpirun for e2e_smpi_smoke.sh): CI fails on a skip of a test that
# these packages would let run (tests/README.md). systemd (systemd-analyze), strace and file: install.sh and
# install_service.sh check the unit and the installed tree. debootstrap: the Debian 13 test root
# (scripts/trixie.sh, README.md "Debian 13").
set -e
PKGS="build-essential pkg-config clang libclang-rt-14-dev libhwloc-dev hwloc libscotch-dev libjansson-dev
 libslurm-dev slurm-wlm slurmctld slurmd slurm-client munge libmunge-dev libopenmpi-dev openmpi-bin libmpich-dev mpich
 infiniband-diags ibsim-utils libumad2sim0 libibnetdisc-dev libibmad-dev libibumad-dev libxml2-utils
 python3 python3-scipy python3-jsonschema python3-yaml procps psmisc chromium librsvg2-bin util-linux valgrind man-db groff-base libsimgrid-dev iproute2 faketime clang-format
 systemd strace file debootstrap"
[ -n "$RANKMAP_EXTRA_PKGS" ] && PKGS="$PKGS $RANKMAP_EXTRA_PKGS"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -z "$missing" ]; then
	echo "deps: all packages present"
	exit 0
fi
echo "deps: installing$missing"
if [ "$(id -u)" != 0 ]; then
	echo "deps: need root to install:$missing" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends $missing >/dev/null
echo "deps: done"
