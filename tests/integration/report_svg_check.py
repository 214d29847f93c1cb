#!/usr/bin/env python3
"""tests/integration/report_svg_check.py: checks of rankmapctl report's pictures.

  report_svg_check.py svg FILE [--hosts N] [--leaves N] [--bad-links N] [--note-links N] [--names NAME,...]
                        [--torus] [--in-boxes] [--list-breaks] [--host-boxes NAME=N] [--bad-hca N]
                        [--bad-hca-ports PORTS_REPORT] [--report JSON] [--lateral-short]
      FILE parses as XML with an <svg> root; its host boxes (<title>N hosts: ...</title>) add up to
      N hosts in the given number of leaf boxes; N red (could be faster or wider) or orange (below the
      norm) dashed links between switches; every NAME appears in some text or title; --torus: an
      embedded <svg> holding the torus ordering picture.
      --in-boxes: every text line of a box fits its box, and every left-aligned line the picture
      (width estimated here from DejaVu Sans's average advance, or its textLength).
      --report JSON: against `rankmapctl report --json` of the same cluster (check_against_report).
      --lateral-short: no link drawn as an arc; lateral links only between neighbours.
      --list-breaks: the lines of every host list end between hosts or between the numbers of a range
      (on a comma), or before the '[' of a name too long for a line, never inside a name or number.
      --sorted: the switches of each level and subnet are placed (rows top down, left to right) in
      natural order of their names.
      --host-boxes NAME=N: host NAME is in exactly N host boxes (lists expanded here).
      --bad-hca N: the slow/narrow HCA link groups (a red dashed link each) count N links;
      --bad-hca-ports FILE: N counted here from an ibnetdiscover -p ports report: HCA-switch links
      below the most common speed or width of the file's links.
  report_svg_check.py png FILE
      FILE is a PNG whose decoded pixels are not all one colour (a rendered, non-blank picture).
Prints one line per problem; exit 1 if any.
"""
import collections
import json
import os
import re
import struct
import sys
import xml.etree.ElementTree as ET
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_topo_check import expand  # noqa: E402 - Slurm host list expansion, own code

SPEEDS = {'SDR': 1, 'DDR': 2, 'QDR': 3, 'FDR10': 4, 'FDR': 5, 'EDR': 6, 'HDR': 7, 'NDR': 8, 'XDR': 9}


def ports_bad_hca(path):
    """HCA-to-switch links of a ports report below the file's most common speed or width."""
    links = {}
    for line in open(path):
        m = re.match(r'^(CA|SW)\s+\d+\s+\d+\s+(0x[0-9a-f]+)\s+(\d+)x\s+(\S+)\s+-\s+(CA|SW)\s+\d+\s+(\d+)\s+'
                     r'(0x[0-9a-f]+)', line)
        if m:
            a, g1, w, sp, b, p2, g2 = m.groups()
            links[tuple(sorted([(a, g1), (b, g2)]))] = (int(w), SPEEDS.get(sp, 0))
    ns = collections.Counter(v[1] for v in links.values() if v[1]).most_common(1)[0][0]
    nw = collections.Counter(v[0] for v in links.values() if v[0]).most_common(1)[0][0]
    return sum(1 for k, (w, sp) in links.items() if {k[0][0], k[1][0]} == {'CA', 'SW'} and
               ((sp and sp < ns) or (w and w < nw)))


def text_width(s, size, bold):
    """DejaVu Sans: average advance about 0.6 em (0.66 bold); capitals and digits wider."""
    w = sum(0.72 if c.isupper() else 0.64 if c.isdigit() else 0.3 if c in ' ,.:[]' else 0.6 for c in s)
    return w * size * (1.1 if bold else 1.0)


def check_boxes(root):
    problems = []
    width = float(root.get('width'))
    for t in root.iter(NS + 'text'):  # left-aligned lines (headline, legend): inside the picture
        if t.get('text-anchor') in (None, 'start') and t.get('x') and not t.get('x').endswith('%'):
            w = text_width(t.text or '', float(t.get('font-size', 11)), t.get('font-weight') == 'bold')
            if float(t.get('x')) + w > width:
                problems.append(f'text {t.text!r} runs past the right edge ({float(t.get("x")) + w:.0f} > {width:.0f})')
    for g in root.iter(NS + 'g'):
        rect = g.find(NS + 'rect')
        if rect is None:
            continue
        width = float(rect.get('width'))
        for t in g.findall(NS + 'text'):
            s = t.text or ''
            w = float(t.get('textLength')) if t.get('textLength') else \
                text_width(s, float(t.get('font-size', 11)), t.get('font-weight') == 'bold')
            if w > width:
                problems.append(f'text {s!r} ({w:.0f} px) is wider than its box ({width:.0f} px)')
    return problems


def natural(s):
    return [int(x) if x.isdigit() else x for x in re.split(r'(\d+)', s)]


def check_sorted(root):
    placed = collections.defaultdict(list)
    for g in root.iter(NS + 'g'):
        t, rect = g.find(NS + 'title'), g.find(NS + 'rect')
        m = re.match(r'^(\S+): .*\nGUID \S+, subnet (\d+), level (-?\d+)', (t.text or '') if t is not None else '')
        if m and rect is not None:
            placed[(m.group(2), m.group(3))].append((float(rect.get('y')), float(rect.get('x')), m.group(1)))
    problems = []
    for key, boxes in placed.items():
        names = [n for _, _, n in sorted(boxes)]
        if names != sorted(names, key=natural):
            problems.append(f'subnet {key[0]} level {key[1]}: switches placed as {names[:8]}, not in name order')
    return problems


def host_boxes(root):
    """(title list, [text lines]) of every host box."""
    out = []
    for g in root.iter(NS + 'g'):
        t = g.find(NS + 'title')
        m = re.match(r'^(\d+) hosts: (.*)$', (t.text or '') if t is not None else '', re.S)
        if m:
            out.append((m.group(2), [x.text or '' for x in g.findall(NS + 'text') if x.get('class') != 'problem'][1:]))
    return out


def check_breaks(root):
    """Host list lines end between hosts (a comma) or before a '[', except a line cut with '...' (a name
    too long for the box: the whole list is in the box's tooltip); uncut lines hold the list."""
    problems = []
    for full, lines in host_boxes(root):
        lines = [x for x in lines if not re.search(r'slow/narrow|named by GUID', x)]
        cut = any(x.endswith('...') for x in lines)
        if lines and lines[-1] == '...':
            lines.pop()
        for a, b in zip(lines, lines[1:]):
            if not (a.endswith(',') or b.startswith('[') or a.endswith('...')):
                problems.append(f'host list {full!r} broken between {a!r} and {b!r}')
        named = {h for h in expand(full) if not re.match(r'^0x[0-9a-f]{16}$', h)}
        if not cut and set(expand(''.join(lines))) != named:
            problems.append(f'host list lines {lines} do not hold the hosts {full!r} without GUIDs')
    return problems

NS = '{http://www.w3.org/2000/svg}'
RED, ORANGE = '#d50000', '#ef6c00'


def dashed(root, colour):
    """Dashed links of a colour between switches: not the legend's samples (y < 90), not the stubs of
    HCA link groups, not lateral links (which carry their own title)."""
    inner = {id(e) for g in root.iter(NS + 'g') if g.get('class') == 'bad-hca' for e in g.iter(NS + 'line')}
    return [e for e in root.iter(NS + 'line') if e.get('stroke') == colour and e.get('stroke-dasharray')
            and float(e.get('y1')) > 90 and id(e) not in inner and e.find(NS + 'title') is None]


def check_against_report(root, r):
    """The picture against rankmapctl report --json of the same cluster: the headline counts every host
    of the report; links between switches of two levels drawn red (could be faster/wider) or orange (below
    the norm) as the anomalies say (bundled pictures draw at most 100); every host an anomaly names is
    named in a problem line of its box (no hover needed), and that box has a mark; hosts with no HCA are
    in a box of their own."""
    problems = []
    head = next((t.text or '' for t in root.iter(NS + 'text') if t.get('class') == 'headline'), '')
    m = re.match(r'^(\d+) hosts', head)
    if not m or int(m.group(1)) != r['hosts']:
        problems.append(f'headline {head!r} does not count the report\'s {r["hosts"]} hosts')
    for colour, kinds in ((RED, ('slow_link', 'narrow_link')), (ORANGE, ('below_norm_link',))):
        want = sum(1 for a in r['anomalies'] if a['kind'] in kinds and all(e['type'] == 'switch' for e in a['ends']))
        got = len(dashed(root, colour))
        lateral = sum(1 for e in root.iter(NS + 'line') if e.find(NS + 'title') is not None
                      and e.get('stroke') == colour)
        if got + lateral > want:
            problems.append(f'{got + lateral} {colour} dashed switch links, the report has only {want}')
        if want and not got and not lateral and not any(
                t.get('fill') == colour and 'lateral' in (t.text or '') for t in root.iter(NS + 'text')):
            problems.append(f'the report has {want} such switch links, none drawn {colour}')
    boxes = []
    for g in root.iter(NS + 'g'):
        t = g.find(NS + 'title')
        mm = re.match(r'^(\d+) hosts: (.*)$', (t.text or '') if t is not None else '', re.S)
        if mm:
            rect = g.find(NS + 'rect')
            lines = ' '.join(x.text or '' for x in g.findall(NS + 'text') if x.get('class') == 'problem')
            boxes.append((set(expand(mm.group(2))), lines, float(rect.get('x')) + float(rect.get('width')),
                          float(rect.get('y'))))
    marks = [(float(c.get('cx')), float(c.get('cy'))) for c in root.iter(NS + 'circle') if c.get('class') == 'mark']
    want = {}
    for a in r['anomalies']:
        if a['kind'] == 'no_hardware' and r['hosts_with_hardware'] and a.get('network') == 'fabric':
            want.setdefault(a['host'], set()).add('no hwloc data')
        for e in a.get('ends', []):
            if e['type'] == 'ca' and 'host' in e:
                want.setdefault(e['host'], set()).add('below the norm' if a['kind'] == 'below_norm_link'
                                                      else 'could be faster')
    for host, whats in sorted(want.items()):
        mine = [b for b in boxes if host in b[0]]
        if not mine:
            problems.append(f'host {host} is in no host box')
        for hosts, lines, right, top in mine:
            for w in whats:
                if w not in lines:
                    problems.append(f'host {host}: its box does not say "{w}" without hovering')
            if not any(abs(x - right) < 10 and abs(y - top) < 10 for x, y in marks):
                problems.append(f'host {host}: its box has no mark')
    nohca = {a['host'] for a in r['anomalies'] if a['kind'] == 'not_in_fabric'}
    outside = ' '.join(t.text or '' for g in root.iter(NS + 'g') if g.get('class') == 'outside'
                       for t in g.iter(NS + 'title'))
    for h in sorted(nohca):
        if h not in set(expand(re.sub(r'^\d+ [^:]*: ', '', outside))):
            problems.append(f'host {h} (no HCA) is not in the box of hosts with no HCA')
    return problems


def check_svg(path, args):
    problems = []
    root = ET.parse(path).getroot()
    if root.tag != NS + 'svg':
        return [f'{path}: root element is {root.tag}, not svg']
    titles = [t.text or '' for t in root.iter(NS + 'title')]
    texts = ' '.join((t.text or '') for t in root.iter(NS + 'text')) + ' '.join(titles)
    boxes = [int(m.group(1)) for t in titles for m in [re.match(r'^(\d+) hosts: ', t)] if m]
    if '--hosts' in args and sum(boxes) != int(args[args.index('--hosts') + 1]):
        problems.append(f'host boxes hold {sum(boxes)} hosts, expected {args[args.index("--hosts") + 1]}')
    if '--leaves' in args and len(boxes) != int(args[args.index('--leaves') + 1]):
        problems.append(f'{len(boxes)} host boxes, expected {args[args.index("--leaves") + 1]} leaves')
    if '--bad-links' in args:
        want = int(args[args.index('--bad-links') + 1])
        if len(dashed(root, RED)) != want:
            problems.append(f'{len(dashed(root, RED))} red dashed links, expected {want}')
    if '--note-links' in args:
        want = int(args[args.index('--note-links') + 1])
        if len(dashed(root, ORANGE)) != want:
            problems.append(f'{len(dashed(root, ORANGE))} orange dashed links, expected {want}')
    if '--report' in args:
        problems += check_against_report(root, json.load(open(args[args.index('--report') + 1])))
    if '--lateral-short' in args:
        for e in root.iter(NS + 'path'):
            problems.append('a link is drawn as a path (an arc across the picture)')
        for e in root.iter(NS + 'line'):
            t = e.find(NS + 'title')
            if t is not None and (t.text or '').startswith('lateral link'):
                length = abs(float(e.get('x2')) - float(e.get('x1'))) + abs(float(e.get('y2')) - float(e.get('y1')))
                if length > 60:
                    problems.append(f'{t.text} is drawn {length:.0f} px long, not between neighbours')
    if '--names' in args:
        for n in args[args.index('--names') + 1].split(','):
            if n not in texts:
                problems.append(f'name {n} not in the picture')
    if '--in-boxes' in args:
        problems += check_boxes(root)
    if '--sorted' in args:
        problems += check_sorted(root)
    if '--list-breaks' in args:
        problems += check_breaks(root)
    if '--host-boxes' in args:
        name, n = args[args.index('--host-boxes') + 1].split('=')
        got = sum(1 for full, _ in host_boxes(root) if name in expand(full))
        if got != int(n):
            problems.append(f'host {name} is in {got} host boxes, expected {n}')
    want_hca = None
    if '--bad-hca' in args:
        want_hca = int(args[args.index('--bad-hca') + 1])
    if '--bad-hca-ports' in args:
        want_hca = ports_bad_hca(args[args.index('--bad-hca-ports') + 1])
    if want_hca is not None:
        got, groups = 0, [g for g in root.iter(NS + 'g') if g.get('class') == 'bad-hca']
        for g in groups:
            m = re.match(r'^(\d+) HCA links? ', g.find(NS + 'title').text or '')
            got += int(m.group(1)) if m else 0
            if not any(e.get('stroke') in (RED, ORANGE) and e.get('stroke-dasharray') for e in g.iter(NS + 'line')):
                problems.append('a slow/narrow HCA link group has no red or orange dashed link')
        if got != want_hca:
            problems.append(f'{got} slow/narrow HCA links drawn, expected {want_hca}')
    if '--torus' in args:
        inner = [e for e in root.iter(NS + 'svg') if e is not root]
        if not inner or not any('ordering' in (t.text or '') for t in inner[0].iter(NS + 'text')):
            problems.append('no embedded torus ordering picture')
    return problems


def png_pixels(path):
    data = open(path, 'rb').read()
    if data[:8] != b'\x89PNG\r\n\x1a\n':
        raise ValueError('not a PNG')
    pos, idat, width, height = 8, b'', 0, 0
    while pos < len(data):
        n, kind = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b'IHDR':
            width, height = struct.unpack('>II', body[:8])
        elif kind == b'IDAT':
            idat += body
        pos += 12 + n
    return width, height, zlib.decompress(idat)


def check_png(path):
    try:
        w, h, raw = png_pixels(path)
    except Exception as e:  # noqa: BLE001 - any decoding failure is the finding
        return [f'{path}: {e}']
    if w < 100 or h < 100:
        return [f'{path}: {w}x{h} is too small']
    # Filtered scanlines: a blank picture compresses to a handful of distinct byte values.
    if len(set(raw)) < 8:
        return [f'{path}: the picture is blank ({len(set(raw))} distinct byte values)']
    return []


def main():
    mode, path, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    problems = check_svg(path, args) if mode == 'svg' else check_png(path)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
