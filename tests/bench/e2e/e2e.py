"""tests/bench/e2e/e2e.py: runs the end-to-end SMPI benchmark (what reordering does to run time) and writes its table and chart.

    python3 e2e.py --bin DIR [--out DIR] [--jobs N] [--quick] [--only PATTERN]

Every scenario runs the same binary (linked with librankmap_mpi_smpi.a) under smpirun:
  block, cyclic   RANKMAP_DISABLE=1 with the block or cyclic SMPI hostfile (the plain placements);
  <algo>          rankmap reordering (RANKMAP_ALGO=treematch|scotch|auto) inside MPI_Cart_create /
                  MPI_Dist_graph_create_adjacent, with the cluster described by RANKMAP_CLUSTER.
A reordered figure is the WORSE of the runs started from the block and from the cyclic placement
(the library cannot choose where the scheduler put the ranks), unless the scenario says otherwise.
Weighted runs take RANKMAP_PATTERN from a traced run of the same program (RANKMAP_TRACE); when the
tracer cannot see the traffic (SMPI collectives) the program's own pattern file is used instead and
the table says so. Times are SMPI simulated seconds of each program's timed loop (max over ranks).
"""
import argparse
import concurrent.futures as cf
import fnmatch
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_platform import Platform  # noqa: E402
import e2e_report  # noqa: E402

SMPI_CFG = ["--cfg=smpi/coll-selector:mpich", "--cfg=smpi/bcast:binomial_tree", "--cfg=smpi/reduce:binomial",
            "--cfg=smpi/allreduce:rdb", "--cfg=smpi/simulate-computation:no",
            "--cfg=smpi/auto-shared-malloc-thresh:65536", "--cfg=smpi/privatization:no",
            "--cfg=smpi/host-speed:1Gf", "--log=root.thres:critical"]
ALGOS = ["treematch", "scotch", "auto"]
RUN_TIMEOUT = 900  # seconds per simulation
RASHTI = dict(kind="fattree", nhosts=4, cores=8, params="2;2,2;1,1;1,1", order=[0, 2, 1, 3])
SEED_MJ = "MJ11: 10-20 % faster than serial (block)"
SEED_RASHTI = "Rashti11: up to 60 % less than block"
SEED_A2A = "not reported by the seeds"
SEED_SCALE = "MJ11 ZEUS-MP 3D: >15 %; Rashti11: unweighted sometimes worse than block"


def scenarios(quick):
    """The scenario list: name, platform, program, arguments, how reordering gets its weights."""
    it = 3 if quick else 10
    s = [dict(name="ring-of-rings 8x8", plat=dict(kind="flat", nhosts=8, cores=8, node="pack:2 core:4 pu:1"),
              ranks=64, prog="ring_of_rings", args=["--ring", "8", "--token", "65536", "--laps", "4",
                                                     "--gather", "65536", "--iters", str(it)],
              weights="args", seed=SEED_MJ, group="ring")]
    for name, dims, per, by in (("2D torus 8x4", "8x4", "1,1", "262144,16384"),
                                ("3D torus 4x4x2", "4x4x2", "1,1,1", "262144,16384,16384"),
                                ("hypercube 2^5", "2x2x2x2x2", "0", "262144,16384")):
        s.append(dict(name="Rashti " + name + ", heavy dim 0", plat=RASHTI, ranks=32, prog="cart_bench",
                      args=["--dims", dims, "--periods", per, "--bytes", by, "--iters", str(it)],
                      weights="trace", unweighted=True, seed=SEED_RASHTI, group="heavy"))
    for dims in ("8x4", "16x2"):
        s.append(dict(name="Alltoall along dim 0 of " + dims, plat=RASHTI, ranks=32, prog="cart_bench",
                      args=["--dims", dims, "--mode", "alltoall", "--dim", "0", "--bytes", "65536",
                            "--iters", str(it)], weights="program", seed=SEED_A2A, group="alltoall"))
    scale = [("8x8x8", 512, 64, "2;16,4;1,8;1,1", "4,4,4"), ("16x8x8", 1024, 128, "2;16,8;1,8;1,1", "8,4,4")]
    for dims, ranks, nh, ft, tor in scale[:1] if quick else scale:
        for kind, par in (("fattree", ft), ("torus", tor)):
            s.append(dict(name="stencil %s (%d) on %s %s" % (dims, ranks, kind, par.replace(";", " ")),
                          plat=dict(kind=kind, nhosts=nh, cores=8, params=par), ranks=ranks, prog="cart_bench",
                          args=["--dims", dims, "--bytes", "16384,131072,16384", "--iters", "1" if quick else "2"],
                          weights="trace", unweighted=True, starts=["block"], seed=SEED_SCALE, group="scale"))
    return s


def smpirun(sc, work, hostfile, env_extra, prog_extra=()):
    """One simulation. Returns dict(time, offnode, wall, warn, rc, out)."""
    env = dict(os.environ, TMPDIR=work, **env_extra)
    cmd = ["smpirun", "-platform", os.path.join(work, "platform.xml"), "-hostfile", hostfile,
           "-np", str(sc["ranks"])] + SMPI_CFG + [os.path.join(sc["bin"], sc["prog"])] + sc["args"] + list(prog_extra)
    t0 = time.time()
    try:
        p = subprocess.run(cmd, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired as e:  # subprocess.run kills the simulation it started
        p = subprocess.CompletedProcess(cmd, -9, (e.stdout or b"").decode(errors="replace") +
                                        "\ne2e: timed out after %d s" % RUN_TIMEOUT)
    wall = time.time() - t0
    m = re.search(r"E2E time=([0-9.e+-]+) offnode=([0-9.]+)", p.stdout)
    warn = [ln for ln in p.stdout.splitlines() if ln.startswith("rankmap:")]
    return dict(time=float(m.group(1)) if m else None, offnode=float(m.group(2)) if m else None,
                wall=wall, warn=warn, rc=p.returncode, out=p.stdout[-2000:], cmd=" ".join(cmd))


def prepare(sc, out):
    """Writes the platform, hostfiles and rankmap cluster files of a scenario into its own directory."""
    work = os.path.join(out, re.sub(r"[^A-Za-z0-9]+", "_", sc["name"]).strip("_"))
    os.makedirs(work, exist_ok=True)
    pl = sc["plat"]
    p = Platform(pl["kind"], pl["nhosts"], pl["cores"], pl.get("params", ""), pl.get("order"),
                 pl.get("node", "core:8 pu:1"))
    files = {os.path.join(work, "platform.xml"): p.xml()}
    for place in ("block", "cyclic"):
        files[os.path.join(work, place + ".hosts")] = p.hostfile(place, sc["ranks"])
    files.update(p.rankmap_files(os.path.join(work, "rankmap")))
    for path, text in files.items():
        with open(path, "w") as f:
            f.write(text)
    return work


def pattern_for(sc, work, log):
    """Runs the weight-recording run (block placement, rankmap disabled) and returns (path, source)."""
    if sc["weights"] == "args":
        return None, "dist-graph weights"
    tr = os.path.join(work, "traced.mtx")
    own = os.path.join(work, "program.mtx")
    hf = os.path.join(work, "block.hosts")
    if sc["weights"] == "trace":
        r = smpirun(sc, work, hf, {"RANKMAP_TRACE": tr})
        log(sc, "trace", r)
        if r["time"] is not None and os.path.exists(tr) and os.path.getsize(tr) > 0:
            return tr, "traced run (RANKMAP_TRACE)"
    r = smpirun(sc, work, hf, {"RANKMAP_DISABLE": "1"}, ["--pattern-out", own])
    log(sc, "pattern", r)
    if r["time"] is None or not os.path.exists(own):
        return None, "none (pattern run failed)"
    return own, "program's own pattern" if sc["weights"] == "program" else "program's pattern (tracer gave none)"


def jobs_of(sc, work, pattern):
    """The runs of a scenario: (label, start, env)."""
    base = {"RANKMAP_DISABLE": "1"}
    runs = [("block", "block", base), ("cyclic", "cyclic", base)]
    cl = os.path.join(work, "rankmap.cluster")
    for start in sc.get("starts", ["block", "cyclic"]):
        for algo in ALGOS:
            env = {"RANKMAP_ALGO": algo, "RANKMAP_CLUSTER": cl, "RANKMAP_METRIC": "bytes",
                   "RANKMAP_REPORT": os.path.join(work, "rankmap-report.txt")}
            if pattern:
                runs.append((algo, start, dict(env, RANKMAP_PATTERN=pattern)))
            if sc.get("unweighted") or not pattern:
                runs.append((algo + (" unweighted" if pattern else ""), start, env))
    return runs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True, help="directory holding the SMPI benchmark programs")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "out"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="fewer iterations, no 1024-rank cases")
    ap.add_argument("--only", default="*", help="shell pattern on scenario names")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    t0 = time.time()
    logf = open(os.path.join(a.out, "runs.log"), "w")

    def log(sc, label, r):
        logf.write("## %s / %s: time=%s wall=%.1fs rc=%d\n%s\n%s\n" % (sc["name"], label, r["time"], r["wall"],
                   r["rc"], r["cmd"], r["out"] if r["time"] is None or r["warn"] else ""))
        logf.flush()

    todo = [sc for sc in scenarios(a.quick) if fnmatch.fnmatch(sc["name"], a.only)]
    results = []
    with cf.ThreadPoolExecutor(max_workers=a.jobs) as ex:
        prep = {}
        for sc in todo:
            sc["bin"] = a.bin
            prep[sc["name"]] = ex.submit(lambda s: (lambda w: (w, pattern_for(s, w, log)))(prepare(s, a.out)), sc)
        futs = []
        for sc in todo:
            work, (pattern, source) = prep[sc["name"]].result()
            sc["weight_source"] = source
            for label, start, env in jobs_of(sc, work, pattern):
                hf = os.path.join(work, start + ".hosts")
                futs.append((sc, label, start, ex.submit(smpirun, sc, work, hf, env)))
        for sc, label, start, f in futs:
            r = f.result()
            log(sc, "%s from %s" % (label, start), r)
            results.append(dict(scenario=sc["name"], group=sc["group"], seed=sc["seed"], label=label, start=start,
                                weights=sc["weight_source"], time=r["time"], offnode=r["offnode"], wall=r["wall"],
                                warn=r["warn"]))
            print("  %-52s %-22s from %-6s %s" % (sc["name"], label, start,
                  "%.3f ms" % (r["time"] * 1e3) if r["time"] is not None else "FAILED (see runs.log)"), flush=True)
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    ok = e2e_report.report(results, a.out, time.time() - t0)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
