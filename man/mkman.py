#!/usr/bin/env python3
"""man/mkman.py: rankmap's manual pages, from one source each, so that pages, --help and files cannot drift.

  mkman.py SRC OUT --paths STAMP [--prog NAME=PATH]... [--file NAME=PATH]...

SRC is a page source, man/<page>.<section>.in: prose in a light markup, plus directives that take their
text from the programs and files themselves:

  @title NAME SECTION "one-line description" "manual name"
  = SECTION            .SH                    == Subsection      .SS
  - term               an indented paragraph (.TP); its text on the following lines, indented 2 spaces
  (blank line)         a new paragraph        4 spaces (6 inside a term) a literal block
  `bold`  <italic>     inline; @PREFIX@, @SBINDIR@, @SYSCONFDIR@... the installation directories (STAMP)
  @usage PROG          the Usage: lines of `PROG --help` (a short SYNOPSIS)
  @options PROG        the Options: list of `PROG --help`, one term per option
  @limits PROG         the RANKMAP_FILE_LIMIT_* caps `PROG --help` prints, with their defaults
  @commands PROG       every command of `PROG --help`'s Commands: list, with `PROG CMD --help`
  @confkeys FILE PROG  every key of the documented configuration FILE (its comments, by "## " section),
                       with its default from `PROG --config EMPTY --print-config`
  @spankargs FILE      the plugin arguments documented in the plugstack.conf example FILE
  @spankopts FILE      the user options documented there
  @file FILE           FILE as a literal block

PROG and FILE are names given with --prog/--file (or paths). Help texts are kept as printed where they
are blocks; everything is escaped for troff. A directive whose source gives nothing is an error.
"""
import os
import re
import subprocess
import sys
import tempfile

VERSION = "0.1.0"
DATE = "2026"


def die(msg):
    sys.exit("mkman: " + msg)


def esc(text):
    """Escapes troff's special characters of plain text (no inline markup)."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    if text.startswith(".") or text.startswith("'"):
        text = "\\&" + text
    return text


def inline(text, paths):
    """Prose: @VAR@ substituted, then escaped, then `bold` and <italic>."""
    text = subst(text, paths)
    out, i = [], 0
    for m in re.finditer(r"`([^`]+)`|<([A-Za-z][A-Za-z0-9_ .-]*)>", text):
        out.append(esc_mid(text[i:m.start()]))
        if m.group(1) is not None:
            out.append("\\fB" + esc_mid(m.group(1)) + "\\fR")
        else:
            out.append("\\fI" + esc_mid(m.group(2)) + "\\fR")
        i = m.end()
    out.append(esc_mid(text[i:]))
    line = "".join(out)
    if line.startswith(".") or line.startswith("'"):
        line = "\\&" + line
    return line


def esc_mid(text):
    return text.replace("\\", "\\e").replace("-", "\\-")


def subst(text, paths):
    def one(m):
        if m.group(1) not in paths:
            die("unknown placeholder @%s@" % m.group(1))
        return paths[m.group(1)]
    return re.sub(r"@([A-Z_]+)@", one, text)


def literal(lines):
    out = [".RS 4", ".nf"]
    out += [esc(l) if l.strip() else "" for l in lines]
    return out + [".fi", ".RE"]


def run(argv):
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if not r.stdout.strip():
        die("%s printed nothing" % " ".join(argv))
    return r.stdout


def help_section(text, head):
    """The lines of a --help text from the line starting with head up to the next blank line."""
    out, inside = [], False
    for line in text.split("\n"):
        if line.startswith(head):
            inside = True
            rest = line[len(head):].strip()
            if rest:
                out.append(rest)
        elif inside and not line.strip():
            break
        elif inside:
            out.append(line)
    return out


def opt_term(term):
    """'-c, --config FILE' in bold with its argument in italics."""
    words = re.split(r"(\s+|,\s*|=)", term)
    out = []
    for w in words:
        if re.match(r"^[A-Z][A-Z_]*(\.\.\.)?$", w) or re.match(r"^\[?[A-Z][A-Z_,:\[\]]*$", w):
            out.append("\\fI" + esc_mid(w) + "\\fR")
        elif w.strip() and w not in (",", "="):
            out.append("\\fB" + esc_mid(w) + "\\fR")
        else:
            out.append(esc_mid(w))
    return "".join(out)


def options(prog, paths):
    lines = help_section(run([prog, "--help"]), "Options:")
    out, cur = [], None
    for line in lines:
        m = re.match(r"^  (\s*)(-\S.*?)(?:\s{2,}(\S.*))?$", line)
        if m and len(m.group(1)) <= 4:
            cur = [m.group(2), [m.group(3)] if m.group(3) else []]
            out.append(cur)
        elif cur and line.strip():
            cur[1].append(line.strip())
    if not out:
        die("%s --help has no Options: list" % prog)
    res = []
    for term, text in out:
        res += [".TP", opt_term(term), esc(" ".join(text))]
    return res


def usage(prog):
    text = run([prog, "--help"])
    lines = help_section(text, "Usage:")
    if not lines:
        die("%s --help has no Usage: line" % prog)
    return [".nf"] + [esc(l.strip()) for l in lines] + [".fi"]


def limits(prog):
    out = []
    for line in run([prog, "--help"]).split("\n"):
        m = re.match(r"^\s+(RANKMAP_FILE_LIMIT_[A-Z]+)\s+(.*?)\s+default\s+(\S+)", line)
        if m:
            out += [".TP", "\\fB%s\\fR" % m.group(1), esc("%s; default %s." % (m.group(2), m.group(3)))]
    if not out:
        die("%s --help lists no RANKMAP_FILE_LIMIT_ variable" % prog)
    return out


def commands(prog):
    top = run([prog, "--help"])
    out = []
    for line in help_section(top, "Commands:"):
        parts = line.split(None, 1)
        if not parts:
            continue
        name, what = parts[0], parts[1].strip() if len(parts) > 1 else ""
        out += [".SS rankmapctl %s" % esc(name), esc(what[:1].upper() + what[1:] + ".") if what else ""]
        out += literal(run([prog, name, "--help"]).rstrip("\n").split("\n"))
    if not out:
        die("%s --help has no Commands: list" % prog)
    return out


def confkeys(path, prog, paths):
    """The documented configuration: '## Title ---' sections; each key (set or commented out, '#key =')
    with the comment paragraphs written above it; its default from --print-config."""
    with tempfile.NamedTemporaryFile("w", suffix=".conf", delete=False) as f:
        empty = f.name
    try:
        printed = run([prog, "--config", empty, "--print-config"])
    finally:
        os.unlink(empty)
    defaults, helps, last = {}, {}, ""
    for line in printed.split("\n"):
        m = re.match(r"^(#?)([a-z_]+) = ?(.*)$", line)
        if m:
            defaults[m.group(2)] = None if m.group(1) else m.group(3)
            helps[m.group(2)] = last
        elif line.startswith("# "):
            last = line[2:].strip()
    out, paras, para, seen, order = [], [], [], {}, []
    with open(path) as f:
        lines = f.read().split("\n")
    for line in lines:
        sec = re.match(r"^## (.*?)\s*-*\s*$", line)
        key = re.match(r"^#?([a-z_]+) = (.*)$", line)
        if sec:
            flush(out, order, seen, defaults, helps)
            out.append(".SS " + esc(sec.group(1)))
            paras, para = [], []
        elif key:
            name, value = key.group(1), key.group(2)
            if para:
                paras.append(para)
            if name not in seen:
                seen[name] = [" ".join(" ".join(p) for p in paras), []]
                order.append(name)
            if line.startswith("#") and value not in seen[name][1]:
                seen[name][1].append(value)
            paras, para = [], []
        elif line.startswith("#") and line[1:].strip():
            para.append(line[1:].strip())
        elif para:
            paras.append(para)
            para = []
    flush(out, order, seen, defaults, helps)
    missing = sorted(set(defaults) - set(k for k in seen))
    if missing:
        die("%s does not document the keys %s" % (path, ", ".join(missing)))
    unknown = sorted(set(seen) - set(defaults))
    if unknown:
        die("%s documents keys rankmapd does not know: %s" % (path, ", ".join(unknown)))
    return out


def code(text):
    """Plain text with `code` in bold."""
    out = re.sub(r"`([^`]+)`", lambda m: "\\fB" + m.group(1) + "\\fR", esc_mid(text))
    return "\\&" + out if out.startswith((".", "'")) else out


def flush(out, order, seen, defaults, helps):
    """The keys gathered so far: the file's comments, else rankmapd's one-line help of the key."""
    for name in order:
        text, examples = seen[name]
        if not text:
            h = helps.get(name, "")
            text = h[:1].upper() + h[1:] + "." if h else ""
        d = defaults.get(name)
        tail = "Default: %s." % d if d else "Not set by default."
        if examples:
            tail += " Example: %s." % "; ".join("%s = %s" % (name, e) for e in examples)
        out += [".TP", "\\fB%s\\fR" % esc_mid(name), code(text), ".IP", esc(tail)]
    order.clear()


def plugstack_items(path, head, stop):
    """Items of a '# Arguments' or '# User options' block of the plugstack example: '#   name  text'
    lines, continued on deeper-indented comment lines."""
    with open(path) as f:
        lines = f.read().split("\n")
    items, inside = [], False
    for line in lines:
        if line.startswith(head):
            inside = True
            continue
        if not inside:
            continue
        if not line.startswith("#") or re.match(stop, line):
            break
        m = re.match(r"^#   (\S+)(?:\s+(\S.*))?$", line)
        if m and not line.startswith("#    "):
            items.append([m.group(1), [m.group(2)] if m.group(2) else []])
        elif items and line[1:].strip():
            items[-1][1].append(line[1:].strip())
    if not items:
        die("%s: nothing under %r" % (path, head))
    out = []
    for term, text in items:
        t = re.sub(r"\s+default\s+(\S+)$", r". Default: \1.", " ".join(text))
        out += [".TP", opt_term(term), esc(re.sub(r"\s{2,}", " ", t))]
    return out


def page(src, paths, names):
    def arg(x):
        return names.get(x, x)

    out, item, lit = [], False, []
    title = None

    def end_lit():
        nonlocal lit
        if lit:
            out.extend(literal(lit))
            lit = []

    with open(src) as f:
        text = f.read()
    for raw in text.split("\n"):
        line = subst(raw, paths) if raw.startswith(" ") else raw
        if lit and not (line.startswith("    ") or (not line.strip() and lit)):
            end_lit()
        if raw.startswith("@title "):
            m = re.match(r'^@title (\S+) (\d) "(.*)" "(.*)"$', raw)
            if not m:
                die("%s: bad @title" % src)
            title = m.groups()
            out += ['.\\" Generated by rankmap\'s mkman.py from its source %s and the programs\' help: edit those.'
                    % os.path.basename(src),
                    '.TH %s %s "%s" "rankmap %s" "%s"' % (m.group(1).upper(), m.group(2), DATE, VERSION, m.group(4)),
                    ".SH NAME", "%s \\- %s" % (esc(m.group(1)), esc(m.group(3)))]
        elif re.match(r"^@[a-z]+( |$)", raw):
            d = raw.split()
            item = False
            if d[0] == "@usage":
                out += usage(arg(d[1]))
            elif d[0] == "@options":
                out += options(arg(d[1]), paths)
            elif d[0] == "@limits":
                out += limits(arg(d[1]))
            elif d[0] == "@commands":
                out += commands(arg(d[1]))
            elif d[0] == "@confkeys":
                out += confkeys(arg(d[1]), arg(d[2]), paths)
            elif d[0] == "@spankargs":
                out += plugstack_items(arg(d[1]), "# Arguments", r"^#\s*$")
            elif d[0] == "@spankopts":
                out += plugstack_items(arg(d[1]), "# User options", r"^# \S")
            elif d[0] == "@file":
                with open(arg(d[1])) as f:
                    out.extend(literal(f.read().rstrip("\n").split("\n")))
            else:
                die("%s: unknown directive %s" % (src, d[0]))
        elif raw.startswith(".") and re.match(r"^\.[A-Za-z]{2}$", raw):
            out.append(raw)  # a troff request (.nf, .fi, .PP), as is
        elif raw.startswith("== "):
            item = False
            out.append(".SS " + inline(raw[3:], paths))
        elif raw.startswith("= "):
            item = False
            out.append(".SH " + inline(raw[2:], paths))
        elif raw.startswith("- "):
            item = True
            out += [".TP", inline(raw[2:], paths)]
        elif not raw.strip():
            if lit:
                lit.append("")
            elif out and out[-1] not in (".PP",) and not out[-1].startswith(".SH") and not out[-1].startswith(".SS"):
                out.append(".PP")
            item = False
        elif raw.startswith(" " * (6 if item else 4)):
            lit.append(line[6 if item else 4:])
        else:
            if out and out[-1] == ".PP" and raw.startswith("  ") and item:
                out.pop()
            out.append(inline(raw.strip(), paths))
    end_lit()
    if not title:
        die("%s: no @title" % src)
    while out and out[-1] == ".PP":
        out.pop()
    # a paragraph break right before a section, a term or a literal block is redundant
    clean = []
    for i, l in enumerate(out):
        if l == ".PP" and i + 1 < len(out) and (out[i + 1].startswith((".SH", ".SS", ".TP"))):
            continue
        clean.append(l)
    return clean


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        sys.exit(__doc__)
    src, dst, rest = args[0], args[1], args[2:]
    paths, names = {}, {}
    i = 0
    while i < len(rest):
        if rest[i] == "--paths":
            with open(rest[i + 1]) as f:
                for line in f:
                    if "=" in line:
                        k, v = line.rstrip("\n").split("=", 1)
                        paths[k] = v
        elif rest[i] in ("--prog", "--file"):
            k, v = rest[i + 1].split("=", 1)
            names[k] = v
        else:
            sys.exit(__doc__)
        i += 2
    text = "\n".join(page(src, paths, names)) + "\n"
    with open(dst + ".tmp", "w") as f:
        f.write(text)
    os.replace(dst + ".tmp", dst)


if __name__ == "__main__":
    main()
