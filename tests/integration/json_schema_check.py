#!/usr/bin/env python3
"""tests/integration/json_schema_check.py: rankmap's JSON documents against daemon/rankmap.schema.json.

  json_schema_check.py SCHEMA file DEF FILE...   each FILE (rankmapctl --json output) is valid against
                                                 the schema's $defs/DEF, written as rankmapctl writes every
                                                 --json (indented by 2), its reals in their shortest
                                                 round-trip form, its hop_histogram in increasing order
  json_schema_check.py SCHEMA daemon SOCKET [PATTERN...]
                                                 sends one request of every type to rankmapd's Unix socket
                                                 (and a few that fail) and checks each answer against
                                                 $defs/response_TYPE (or $defs/response for errors), with
                                                 the same number and order checks on the frame's text;
                                                 each PATTERN file (a learned pattern's text form, of the
                                                 caller's uid) is stored (pattern_put, as the MPI library
                                                 does), fetched by its key (pattern_get) and listed
                                                 (pattern_list), and kept in the daemon
Prints one line per problem and the count of documents checked; exit 1 on any problem.
The schema checks use python3-jsonschema (Draft 2020-12); nothing here derives expectations from rankmap.
"""
import json
import re
import socket
import struct
import sys

import jsonschema

NUM = re.compile(r'-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?')


def sig_digits(tok):
    m = tok.lstrip('-').lower().split('e')[0].replace('.', '').lstrip('0').rstrip('0')
    return len(m)


def reals_shortest(text):
    """Every real of the JSON text has no more significant digits than Python's shortest repr."""
    bad, in_str, i = [], False, 0
    while i < len(text):
        c = text[i]
        if in_str:
            i += 2 if c == '\\' else 1
            in_str = in_str and c != '"'
            continue
        if c == '"':
            in_str = True
            i += 1
            continue
        m = NUM.match(text, i) if (c == '-' or c.isdigit()) else None
        if m:
            tok = m.group(0)
            if ('.' in tok or 'e' in tok.lower()) and sig_digits(tok) > sig_digits(repr(float(tok))):
                bad.append(f'{tok} is not the shortest form of its double ({repr(float(tok))})')
            i = m.end()
        else:
            i += 1
    return bad


def sorted_histograms(doc, where=''):
    bad = []
    if isinstance(doc, dict):
        for k, v in doc.items():
            if k == 'hop_histogram' and isinstance(v, list):
                keys = [e.get('hops', e.get('distance')) for e in v]
                known = [x for x in keys if x is not None]
                if known != sorted(known) or len(set(known)) != len(known) or \
                        (None in keys and keys.index(None) != len(keys) - 1):
                    bad.append(f'{where}{k} is not in increasing order, no path last: {keys}')
            else:
                bad += sorted_histograms(v, f'{where}{k}.')
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            bad += sorted_histograms(v, f'{where}{i}.')
    return bad


def validator(schema, name):
    return jsonschema.Draft202012Validator({'$ref': f'#/$defs/{name}', '$defs': schema['$defs']})


def check_doc(schema, name, text, what, indented=True):
    try:
        doc = json.loads(text)
    except ValueError as e:
        return [f'{what}: not JSON ({e})']
    bad = [f'{what}: {"/".join(map(str, e.absolute_path))}: {e.message}'
           for e in validator(schema, name).iter_errors(doc)]
    bad += [f'{what}: {b}' for b in reals_shortest(text) + sorted_histograms(doc)]
    if indented and not text.startswith('{\n  "'):
        bad.append(f'{what}: not indented by 2 as every rankmapctl --json')
    return bad


def frame_call(sock, req):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(60)
    s.connect(sock)
    body = json.dumps(req).encode()
    s.sendall(struct.pack('>I', len(body)) + body)
    hdr = b''
    while len(hdr) < 4:
        hdr += s.recv(4 - len(hdr))
    n, data = struct.unpack('>I', hdr)[0], b''
    while len(data) < n:
        data += s.recv(n - len(data))
    s.close()
    return data.decode()


def pattern_key(text):
    """The key of a pattern's text form (its program, fn, order and shape lines), for pattern_get."""
    kv = dict(line.split(' = ', 1) for line in text.splitlines() if ' = ' in line and not line.startswith('#'))
    return {'program': kv['program'], 'fn': kv['fn'], 'order': int(kv['order']), 'shape': kv['shape']}


def daemon(schema, sock, patterns):
    env = {'version': 1}
    reqs = [
        ('ping', {}), ('hosts', {}), ('report', {}), ('report', {'svg': True}),
        ('distance', {'hosts': ['fourmi001', 'fourmi002']}), ('distance', {'hosts': ['fourmi001', 'riri']}),
        ('map', {'cart': '4x2', 'hosts': ['fourmi001']}), ('slurm_topology', {}), ('reload', {}),
    ]
    for path in patterns:
        text = open(path).read()
        reqs += [('pattern_put', {'pattern': text}), ('pattern_get', {'key': pattern_key(text)})]
    reqs += [('pattern_list', {}), ('pattern_forget', {'pattern': '0' * 16})]
    fails = [('distance', {'hosts': ['fourmi001', 'nosuchhost']}), ('map', {'cart': 'x'}), ('nosuchtype', {}),
             ('pattern_put', {'pattern': 'rankmap-pattern = 1\n'}),
             ('pattern_get', {'key': {'program': 'build-id:00', 'fn': 'MPI_Cart_create', 'order': 0,
                                      'shape': 'cart 1 0'}})]
    bad, n = [], 0
    for i, (t, extra) in enumerate(reqs + fails):
        text = frame_call(sock, dict(env, type=t, id=i + 1, **extra))
        name = f'response_{t}' if i < len(reqs) else 'response'
        bad += check_doc(schema, name, text, f'daemon {t} {extra}', indented=False)
        if i >= len(reqs) and json.loads(text).get('ok') is not False:
            bad.append(f'daemon {t} {extra}: expected a failure')
        if t == 'pattern_list' and len(json.loads(text).get('patterns', [])) < len(patterns):
            bad.append(f'daemon {t}: {len(patterns)} patterns stored, fewer listed')
        n += 1
    return bad, n


def main():
    schema = json.load(open(sys.argv[1]))
    jsonschema.Draft202012Validator.check_schema(schema)
    if sys.argv[2] == 'file':
        bad, n = [], 0
        for path in sys.argv[4:]:
            bad += check_doc(schema, sys.argv[3], open(path).read(), path)
            n += 1
    else:
        bad, n = daemon(schema, sys.argv[3], sys.argv[4:])
    for b in bad:
        print(b)
    print(f'{n} documents checked, {len(bad)} problems')
    return 1 if bad or not n else 0


if __name__ == '__main__':
    sys.exit(main())
