#!/usr/bin/env python3
"""Writes docs/ec2-prices.json: the on-demand Linux prices, in us-east-1, of the EC2 types the docs price (the
defaults of each tier and the sample's trial sizes), from AWS's own Karpenter provider for AWS.

The source: the Go module github.com/aws/karpenter-provider-aws at the version below, fetched from the Go module proxy
(a package registry) as the go command fetches it. Its pkg/providers/pricing/zz_generated.pricing_aws.go is generated
by AWS from the AWS Price List API and names the time it was generated and the region ("generated at ... for
us-east-1"); those are recorded beside the prices. Run it to refresh (a newer VERSION may hold newer prices):

    python3 tools/ec2-prices.py            # writes docs/ec2-prices.json
    python3 tools/ec2-prices.py --check    # fails if the file differs from what the source says

test/docs-prices.test.ts holds docs/sizing-and-cost.md's figures to that file.
"""
import io
import json
import os
import re
import sys
import urllib.request
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "docs", "ec2-prices.json")
MODULE = "github.com/aws/karpenter-provider-aws"
VERSION = "v1.15.3"
FILE = "pkg/providers/pricing/zz_generated.pricing_aws.go"
REGION = "us-east-1"
# The defaults of each tier (nodes, clients, the seeder) and the sample's trial sizes (bin/sample-stack.ts).
TYPES = ["c7gn.16xlarge", "c7gn.large", "m6id.xlarge", "m6id.large", "m7g.xlarge"]


def proxy() -> str:
    first = (os.environ.get("GOPROXY") or "https://proxy.golang.org").split(",")[0].split("|")[0]
    if first in ("direct", "off", ""):
        first = "https://proxy.golang.org"
    return first.rstrip("/")


def source_text() -> str:
    url = f"{proxy()}/{MODULE}/@v/{VERSION}.zip"
    with urllib.request.urlopen(url, timeout=120) as r:
        data = r.read()
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return z.read(f"{MODULE}@{VERSION}/{FILE}").decode("utf-8")


def parse(text: str) -> dict:
    m = re.search(r"^// generated at (\S+) for (\S+)$", text, re.M)
    if not m:
        raise SystemExit(f"{FILE}: no 'generated at ... for ...' line")
    generated, region = m.group(1), m.group(2)
    start = text.find(f'\t"{REGION}": {{')
    if start < 0:
        raise SystemExit(f"{FILE}: no {REGION} block")
    end = text.find("\n\t},", start)
    block = text[start:end]
    prices = {}
    for name in TYPES:
        p = re.search(r'"' + re.escape(name) + r'": ([0-9.]+)', block)
        if not p:
            raise SystemExit(f"{FILE}: no {REGION} price for {name}")
        prices[name] = float(p.group(1))
    return {
        "source": f"{MODULE}@{VERSION}/{FILE}",
        "generatedAt": generated,
        "generatedFor": region,
        "region": REGION,
        "currency": "USD",
        "unit": "per instance-hour, on-demand, Linux",
        "prices": prices,
    }


def main() -> None:
    data = parse(source_text())
    text = json.dumps(data, indent=1) + "\n"
    if "--check" in sys.argv[1:]:
        with open(OUT, encoding="utf-8") as f:
            if f.read() != text:
                raise SystemExit(f"{OUT} differs from {data['source']}: run python3 tools/ec2-prices.py")
        print(f"{OUT}: as {data['source']} says")
        return
    with open(OUT, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {OUT} from {data['source']} (generated at {data['generatedAt']} for {data['generatedFor']})")


if __name__ == "__main__":
    main()
