#!/bin/sh
# `make run`: the main job on the bundled example cluster (tests/data/example: PlaFRIM's hardware and
# InfiniBand fabric). For now it prints the cluster report; later stages extend it.
set -e
cd "$(dirname "$0")/.."
B=${B:-build}
echo "== rankmapctl report --cluster tests/data/example/cluster.conf"
"$B/rankmapctl" report --cluster tests/data/example/cluster.conf
