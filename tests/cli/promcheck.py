#!/usr/bin/python3
# Checks Prometheus text exposition files (format 0.0.4) the way a scraper reads them:
# 1. the format's documented grammar, line by line (HELP, TYPE, comments, samples with
#    escaped label values, float values), plus the rules around it: a TYPE line at most
#    once per family and before its samples, a family's samples contiguous, no series
#    twice, label names unique in a series, histograms with cumulative buckets ending
#    in le="+Inf" equal to _count;
# 2. prometheus_client's own parser (Debian's python3-prometheus-client), when present.
# Usage: promcheck.py FILE...; prints one line per problem and "ok: ..." at the end;
# exit status 0 only when every file passes.
import re
import sys

NAME = r'[a-zA-Z_:][a-zA-Z0-9_:]*'
LABEL = r'[a-zA-Z_][a-zA-Z0-9_]*'
VALUE = r'(?:[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?Inf|NaN)'
LVAL = r'"(?:[^"\\\n]|\\[\\"n])*"'
SAMPLE = re.compile(r'^(%s)(?:\{((?:%s=%s)(?:,%s=%s)*,?)?\})?[ \t]+(%s)(?:[ \t]+-?[0-9]+)?$'
                    % (NAME, LABEL, LVAL, LABEL, LVAL, VALUE))
PAIR = re.compile(r'(%s)=(%s)' % (LABEL, LVAL))
HELP = re.compile(r'^# HELP (%s)(?: (.*))?$' % NAME)
TYPE = re.compile(r'^# TYPE (%s) (counter|gauge|histogram|summary|untyped)$' % NAME)
SUFFIXES = {'histogram': ('_bucket', '_sum', '_count'), 'summary': ('_sum', '_count', '')}


def family_of(name, types):
    for fam, t in types.items():
        for suf in SUFFIXES.get(t, ()):
            if suf and name == fam + suf:
                return fam
    return name


def check_text(text, where):
    errs = []
    try:
        text.encode('utf-8')
    except UnicodeError:
        errs.append('%s: not UTF-8' % where)
    if text and not text.endswith('\n'):
        errs.append('%s: does not end with a newline' % where)
    types, seen_fams, done_fams, series, hist = {}, set(), set(), set(), {}
    current = None
    for no, line in enumerate(text.split('\n')[:-1], 1):
        at = '%s:%d' % (where, no)
        if line == '':
            continue
        if line.startswith('#'):
            m = TYPE.match(line)
            if m:
                fam = m.group(1)
                if fam in types:
                    errs.append('%s: second TYPE for %s' % (at, fam))
                if fam in seen_fams:
                    errs.append('%s: TYPE for %s after its samples' % (at, fam))
                types[fam] = m.group(2)
            elif line.startswith('# HELP') and not HELP.match(line):
                errs.append('%s: bad HELP line' % at)
            elif line.startswith('# TYPE'):
                errs.append('%s: bad TYPE line' % at)
            continue
        m = SAMPLE.match(line)
        if not m:
            errs.append('%s: not a sample line: %r' % (at, line[:120]))
            continue
        name, labels, value = m.group(1), m.group(2) or '', m.group(3)
        pairs = PAIR.findall(labels)
        names = [p[0] for p in pairs]
        if len(set(names)) != len(names):
            errs.append('%s: a label twice' % at)
        fam = family_of(name, types)
        if fam != current:
            if fam in done_fams:
                errs.append('%s: samples of %s are not contiguous' % (at, fam))
            if current:
                done_fams.add(current)
            current = fam
        seen_fams.add(fam)
        key = (name, tuple(sorted(pairs)))
        if key in series:
            errs.append('%s: series twice: %s' % (at, line[:120]))
        series.add(key)
        if types.get(fam) == 'histogram':
            h = hist.setdefault((fam, tuple(sorted(p for p in pairs if p[0] != 'le'))),
                               {'buckets': [], 'count': None})
            if name.endswith('_bucket'):
                le = dict(pairs).get('le')
                if le is None:
                    errs.append('%s: bucket without le' % at)
                else:
                    h['buckets'].append((float(le.strip('"').replace('+Inf', 'inf')), float(value)))
            elif name.endswith('_count'):
                h['count'] = float(value)
    for (fam, _), h in hist.items():
        b = h['buckets']
        if not b or b[-1][0] != float('inf'):
            errs.append('%s: histogram %s has no le="+Inf" bucket last' % (where, fam))
        elif h['count'] is not None and b[-1][1] != h['count']:
            errs.append('%s: histogram %s: +Inf bucket != _count' % (where, fam))
        if any(b[i][1] > b[i + 1][1] or b[i][0] >= b[i + 1][0] for i in range(len(b) - 1)):
            errs.append('%s: histogram %s buckets not cumulative/ordered' % (where, fam))
    return errs, len(types), len(series)


def main():
    failed = False
    total_f = total_s = 0
    try:
        from prometheus_client.parser import text_string_to_metric_families
    except ImportError:
        text_string_to_metric_families = None
        print('note: python3-prometheus-client not installed: grammar check only')
    for path in sys.argv[1:]:
        with open(path, 'rb') as f:
            raw = f.read()
        try:
            text = raw.decode('utf-8')
        except UnicodeDecodeError as e:
            print('%s: not UTF-8: %s' % (path, e))
            failed = True
            continue
        errs, fams, samples = check_text(text, path)
        if text_string_to_metric_families:
            try:
                n = sum(len(fam.samples) for fam in text_string_to_metric_families(text))
                if n != samples:
                    errs.append('%s: prometheus_client read %d samples, the grammar %d'
                                % (path, n, samples))
            except Exception as e:  # the parser raises ValueError and others
                errs.append('%s: prometheus_client parser: %s' % (path, e))
        for e in errs:
            print(e)
        failed |= bool(errs)
        total_f += fams
        total_s += samples
    if failed:
        sys.exit(1)
    print('ok: %d files, %d families, %d samples%s' % (
        len(sys.argv) - 1, total_f, total_s,
        ', prometheus_client agrees' if text_string_to_metric_families else ''))


main()
