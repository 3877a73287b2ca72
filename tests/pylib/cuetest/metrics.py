# SPDX-License-Identifier: Apache-2.0
"""cuetest.metrics - reading a controller's Prometheus /metrics page in
tests: scrape() parses one page, metric() picks the one sample of a
family with the given labels, metric_total() sums the samples that
match (a histogram's _count over its other labels, for instance)."""
import urllib.request


def scrape(port):
    """{(name, frozenset((label, '"value"'), ...)): value} of the
    /metrics page on 127.0.0.1:port (no proxy)."""
    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with direct.open("http://127.0.0.1:%d/metrics" % port, timeout=5) as r:
        text = r.read().decode()
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        head, value = line.rsplit(" ", 1)
        name, _, labels = head.partition("{")
        pairs = frozenset(tuple(kv.split("=", 1)) for kv in
                          labels.rstrip("}").split(",") if kv)
        out[(name, pairs)] = float(value)
    return out


def metric(m, family, **labels):
    """The value of the one sample of family in scrape() result m whose
    labels include `labels`; None when there is none or several."""
    want = {(k, '"%s"' % v) for k, v in labels.items()}
    vals = [v for (n, ls), v in m.items() if n == family and want <= ls]
    return vals[0] if len(vals) == 1 else None


def metric_total(port, family, **labels):
    """The sum of the samples of family{labels...} on the page at port
    (a histogram family: pass its _count); None when none matches."""
    want = {(k, '"%s"' % v) for k, v in labels.items()}
    vals = [v for (n, ls), v in scrape(port).items()
            if n == family and ls and want <= ls]
    return sum(vals) if vals else None
