"""What the generators of lib/instance/ share: moto's DescribeInstanceTypes data, of the moto version
requirements-dev.txt pins, read from its wheel (fetched with pip, or given), with the wheel's date of that file.

moto ships the data as moto/ec2/resources/instance_types.json.gz and refreshes it on the 1st of each month from
DescribeInstanceTypes in every region its account reads (its scripts/get_instance_info.py, run by its workflow
data-update_ec2-instance-types.yml). The data has no date of its own, so the date recorded is the file's timestamp in
that version's wheel (when moto built the release): the data is at most that new.
"""
import datetime
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REQUIREMENTS = os.path.join(ROOT, "requirements-dev.txt")
DATA = "moto/ec2/resources/instance_types.json.gz"


def pinned_moto() -> str:
    with open(REQUIREMENTS, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^moto(?:\[[^\]]*\])?==(\S+)", line.strip())
            if m:
                return m.group(1)
    raise SystemExit("requirements-dev.txt pins no moto version")


def fetch_wheel(version: str, into: str) -> str:
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary", ":all:",
                    "-d", into, f"moto=={version}"], check=True)
    wheels = [f for f in os.listdir(into) if f.startswith(f"moto-{version}-") and f.endswith(".whl")]
    if len(wheels) != 1:
        raise SystemExit(f"expected one moto {version} wheel in {into}, found {wheels}")
    return os.path.join(into, wheels[0])


def load(wheel=None) -> tuple:
    """(version, date, data): the pinned moto version, its data file's date (ISO) and the data by type name."""
    version = pinned_moto()
    with tempfile.TemporaryDirectory() as tmp:
        wheel = wheel or fetch_wheel(version, tmp)
        if f"moto-{version}-" not in os.path.basename(wheel):
            raise SystemExit(f"{wheel} is not moto {version}, the version requirements-dev.txt pins")
        with zipfile.ZipFile(wheel) as z:
            info = z.getinfo(DATA)
            data = json.loads(gzip.decompress(z.read(DATA)))
    return version, datetime.date(*info.date_time[:3]).isoformat(), data


def ts_list(items, indent):
    lines, line = [], indent
    for item in items:
        piece = f"'{item}', "
        if len(line) + len(piece) > 118:
            lines.append(line.rstrip())
            line = indent
        line += piece
    lines.append(line.rstrip())
    return "\n".join(lines)


def write_or_check(out: str, text: str, check: bool, version: str, date: str, summary: str) -> int:
    """Writes `text` to `out`, or with `check` compares it (exit status 1 when they differ)."""
    rel = os.path.relpath(out, ROOT)
    if check:
        with open(out, encoding="utf-8") as f:
            if f.read() != text:
                print(f"{rel} differs from what moto {version} gives: run the generator", file=sys.stderr)
                return 1
        print(f"{rel} matches moto {version} ({date})")
        return 0
    with open(out, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {rel} from moto {version} ({date}): {summary}")
    return 0
