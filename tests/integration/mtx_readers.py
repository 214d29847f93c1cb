#!/usr/bin/python3
"""tests/integration/mtx_readers.py FILE [MESSAGES_FILE]: prints the graph another Matrix Market reader
(scipy.io.mmread) finds in FILE, in the form of test_map_pattern --dump: "n N", then "u v weight" per
pair of ranks u < v with traffic (0-based). The pair's weight follows rankmap's documented reading: a
general matrix sums both directions, a symmetric one gives the pair's value once. With MESSAGES_FILE,
its values are printed (the messages metric of a trace) instead, after checking that both files hold
the same entries."""
import sys

import scipy.io


def pairs(path):
    info = scipy.io.mminfo(path)
    a = scipy.io.mmread(path)
    a = a.tocoo() if hasattr(a, "tocoo") else scipy.sparse.coo_matrix(a)
    n = a.shape[0]
    w = {}
    for i, j, v in zip(a.row.tolist(), a.col.tolist(), a.data.tolist()):
        if i == j or v == 0:
            continue
        if info[5] == "symmetric" and i < j:
            continue  # scipy mirrors a symmetric matrix: keep its one value per pair
        k = (min(i, j), max(i, j))
        w[k] = w.get(k, 0) + float(v)
    return n, w


import scipy.sparse  # noqa: E402

n, w = pairs(sys.argv[1])
if len(sys.argv) > 2:
    n2, w2 = pairs(sys.argv[2])
    if n2 != n or set(w2) - set(w):
        sys.exit("%s: not the same entries as %s" % (sys.argv[2], sys.argv[1]))
    w = w2
print("n %d" % n)
for (u, v), x in sorted(w.items()):
    print("%d %d %.17g" % (u, v, x))
