"""The CMS bench's own requests, run on the lab's load client in one python3 process (wrk measures the steady state).
Prints one JSON object.

  cms_load.py first SERVER HOST PORT N PATH...
      N requests one after another, the paths in turn (a web server's first requests after it came up): the latency
      of each, in seconds, and its HTTP status.
  cms_load.py publish SERVER HOST LIMIT MARKER PORT...
      Polls the front page of each port in turn until every one serves a page that contains MARKER or LIMIT seconds
      have passed: the seconds until each first did (null if it never did within LIMIT), and the requests made.
"""
import http.client
import json
import sys
import time


def get(server, host, port, path, timeout=300):
    c = http.client.HTTPConnection(server, port, timeout=timeout)
    try:
        c.request('GET', path, headers={'Host': host})
        r = c.getresponse()
        return r.status, r.read()
    finally:
        c.close()


def first(server, host, port, n, paths):
    out = []
    for i in range(n):
        t = time.perf_counter()
        status, _ = get(server, host, port, paths[i % len(paths)])
        out.append({'seconds': time.perf_counter() - t, 'status': status})
    return {'requests': out}


def publish(server, host, limit, marker, ports):
    start = time.time()
    seen = {p: None for p in ports}
    requests = 0
    while time.time() - start < limit and any(v is None for v in seen.values()):
        for p in ports:
            if seen[p] is not None:
                continue
            try:
                status, body = get(server, host, p, '/', timeout=120)
            except OSError:
                continue
            requests += 1
            if status == 200 and marker in body:
                seen[p] = time.time() - start
    return {'seconds': {str(p): v for p, v in seen.items()}, 'requests': requests}


def main():
    kind = sys.argv[1]
    if kind == 'first':
        server, host, port, n = sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
        result = first(server, host, port, n, sys.argv[6:])
    elif kind == 'publish':
        server, host, limit, marker = sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[5].encode()
        result = publish(server, host, limit, marker, [int(p) for p in sys.argv[6:]])
    else:
        raise SystemExit('usage: cms_load.py first|publish ...')
    print(json.dumps(result))


if __name__ == '__main__':
    main()
