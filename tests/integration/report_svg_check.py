#!/usr/bin/env python3
"""tests/integration/report_svg_check.py: checks of rankmapctl report's pictures.

  report_svg_check.py svg FILE [--hosts N] [--leaves N] [--bad-links N] [--names NAME,...] [--torus]
      FILE parses as XML with an <svg> root; its host boxes (<title>N hosts: ...</title>) add up to
      N hosts in the given number of leaf boxes; N red dashed links; every NAME appears in some text
      or title; --torus: an embedded <svg> holding the torus ordering picture.
  report_svg_check.py png FILE
      FILE is a PNG whose decoded pixels are not all one colour (a rendered, non-blank picture).
Prints one line per problem; exit 1 if any.
"""
import re
import struct
import sys
import xml.etree.ElementTree as ET
import zlib

NS = '{http://www.w3.org/2000/svg}'


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
    bad = [e for e in root.iter(NS + 'line') if e.get('stroke') == '#d50000' and e.get('stroke-dasharray')]
    if '--bad-links' in args:
        want = int(args[args.index('--bad-links') + 1]) + 1  # + the legend's sample line
        if len(bad) != want:
            problems.append(f'{len(bad) - 1} red dashed links, expected {want - 1}')
    if '--names' in args:
        for n in args[args.index('--names') + 1].split(','):
            if n not in texts:
                problems.append(f'name {n} not in the picture')
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
