#!/usr/bin/env python3
"""tests/integration/report_text_check.py JSON TEXT [all]: rankmapctl report's text says what its JSON says.

Parses both (the text by its section headings and aligned columns) and compares every number the
text shows: cluster totals, node types, fabric summary, leaf switch rows, link quality (counted here
from the JSON's anomaly list), coverage, torus order, hop histogram and the anomaly count.
Prints one line per difference; exit 1 if any.
"""
import json
import re
import sys


def sections(text):
    out, cur = {}, None
    for line in text.splitlines():
        if line and not line.startswith(' '):
            cur = re.sub(r'[:(].*$', '', line).strip()
            out[cur] = [line]
        elif cur:
            out[cur].append(line)
    return out


def kv_rows(lines):
    rows = {}
    for line in lines[1:]:
        m = re.match(r'^  (\S.*?)\s{2,}(\S.*)$', line)
        if m:
            rows[m.group(1)] = m.group(2)
    return rows


def main():
    o = json.load(open(sys.argv[1]))
    sec = sections(open(sys.argv[2]).read())
    bad = []

    def same(what, text_value, json_value):
        if isinstance(json_value, dict) and text_value == json_value:
            return
        if str(text_value) != str(json_value):
            bad.append(f'{what}: text {text_value!r}, JSON {json_value!r}')

    c = kv_rows(sec['Cluster'])
    for label, key in (('hosts', 'hosts'), ('hosts with hardware', 'hosts_with_hardware'),
                       ('packages', 'packages'), ('cores', 'cores'), ('PUs', 'pus')):
        same(label, c.get(label), o[key])
    if o['node_types']:
        rows = [l.split() for l in sec['Node types'][2:] if re.match(r'^\s+\d', l)]
        same('node type count', len(rows), len(o['node_types']))
        for r, t in zip(rows, o['node_types']):
            same('node type hosts/packages/numa/cores/pus', r[:5],
                 [str(t[k]) for k in ('hosts', 'packages', 'numa_nodes', 'cores', 'pus')])
    f = o.get('fabric')
    if f and o['subnets']:
        ib = kv_rows(sec['InfiniBand fabric'])
        same('subnets', ib.get('subnets'), o['subnets'])
        same('switches', ib.get('switches'), o['switches'])
        same('switches per level', ib.get('switches per level'), ', '.join(map(str, o['switches_per_level'])))
        same('HCA ports', ib.get('HCA ports'), o['hca_ports'])
        same('links', ib.get('links'), o['links'])
        same('unconnected switch ports', ib.get('unconnected switch ports'), o['unconnected_switch_ports'])
        rows = [m.groups() for l in sec.get('Leaf switches', [])[2:]
                for m in [re.match(r'^\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\S+:1|no uplink)\s+(\S+)\s*(.*)$', l)] if m]
        same('leaf rows', len(rows), min(40, len(f['leaves'])))
        for r, e in zip(rows, f['leaves']):
            same(f'leaf {e["switch"]}', [r[0], r[1], r[2], r[3], r[5], r[6]],
                 [str(e['down_ports']), str(e['up_ports']), str(e['lateral_ports']),
                  str(e['unconnected_ports']), e['switch'], e['description']])
            if 'oversubscription' in e:
                same(f'leaf {e["switch"]} oversubscription', r[4], f'{e["oversubscription"]:.2f}:1')
        rails = f.get('rails', [])
        rrows = [l.split() for l in sec.get('Rails', [])[2:] if re.match(r'^\s+\d', l)]
        same('rail rows', len(rrows), len(rails) if len(rails) > 1 else 0)
        for r, e in zip(rrows, rails):
            same(f'rail {e["rail"]}', r, [str(e[k]) for k in ('rail', 'hca_ports', 'hosts', 'leaves')])
        d = f.get('dragonfly')
        if d:
            m = re.match(r'^Dragonfly groups: (\d+) \((.*)\), (\d+) global links between (\d+) pairs',
                         sec['Dragonfly groups'][0])
            same('dragonfly summary', m.groups() if m else None,
                 (str(d['groups']), d['source'], str(d['global_links']), str(d['group_pairs_linked'])))
            grows = [l.split() for l in sec['Dragonfly groups'][2:] if re.match(r'^\s+\d', l)]
            same('group rows', grows, [[str(e[k]) for k in ('group', 'switches', 'hosts')]
                                       for e in d['group_list'][:40]])
            prows = [l.split() for l in sec['Global links per pair of groups'][2:] if re.match(r'^\s+\d', l)]
            same('group pair rows', prows, [[str(e['groups'][0]), str(e['groups'][1]), str(e['links']),
                                             f"{e['gbps']:g}"] for e in d['global_links_per_pair'][:40]])
        else:
            same('no dragonfly section', 'Dragonfly groups' in sec, False)
        kinds = {}
        for a in o['anomalies']:
            kinds[a['kind']] = kinds.get(a['kind'], 0) + 1
        q = kv_rows(sec['Link quality'])
        same('link speeds', q.get('link speeds'), ', '.join(f'{k}: {v}' for k, v in f['link_speeds'].items()))
        same('slow links', q.get('links that could be faster'), kinds.get('slow_link', 0))
        same('narrow links', q.get('links that could be wider'), kinds.get('narrow_link', 0))
        same('below the norm', q.get('links below the subnet norm (supported unknown)'),
             kinds.get('below_norm_link', 0))
        same('supported rates known', q.get("links whose ends' supported rates are known"),
             f"{f['links_with_supported_rates']} of {f['links']}")
        cov = kv_rows(sec['Coverage'])
        same('no hardware', cov.get('network hosts without hardware data'), kinds.get('no_hardware', 0))
        same('not in fabric', cov.get('hosts with hardware data but no HCA'), kinds.get('not_in_fabric', 0))
        same('GUID-named', cov.get('HCAs named only by GUID'), kinds.get('generic_hca', 0))
    if o.get('torus_order'):
        t = o['torus_order']
        m = re.search(r'method (\S+), (\d+) nodes in (\d+) blocks', ' '.join(sec['Torus order']))
        same('torus order', m.groups() if m else None, (t['method'], str(t['nodes']), str(t['blocks'])))
    hist = {}
    for line in sec.get('Hop counts between hosts', [])[2:]:
        p = line.split()
        if len(p) == 2:
            hist[p[0]] = int(p[1])
    key = 'distance' if 'torus' in o['hop_histogram_method'] else 'hops'
    want = {}
    for e in o['hop_histogram']:
        want['unconnected' if e[key] is None else f"{e[key]:g}"] = e['pairs']
    same('hop histogram', hist, want)
    warnings = [a for a in o['anomalies'] if a['severity'] == 'warning']
    notes = [a for a in o['anomalies'] if a['severity'] == 'note']
    m = re.match(r'^Anomalies: (\d+)', sec['Anomalies'][0])
    same('anomaly count', m.group(1) if m else None, len(warnings))
    m = re.match(r'^Notes: (\d+)', sec['Notes'][0]) if 'Notes' in sec else None
    same('note count', m.group(1) if m else '0', len(notes))
    # with --all (a third argument), every anomaly's text is listed, in the JSON's order
    if len(sys.argv) > 3:
        listed = [l for n in ('Anomalies', 'Notes') for l in sec.get(n, [])[2:] if l.startswith('  ')]
        texts = [re.sub(r'^  \S+\s+', '', l) for l in listed if not l.startswith('  ...')]
        same('anomalies listed with --all', texts, [a['text'] for a in warnings + notes])
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
