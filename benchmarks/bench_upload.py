"""Uploaded tables: time and peak memory to read a CSV file with ``noisecore.tasks.read_table``.

Each case runs in a fresh process; the peak is what the parse allocates at its peak (tracemalloc,
which numpy reports its arrays to), beside the file's bytes. Cases: the largest upload the app
accepts and a 19.9 MB file (one-digit cells are the most cells per byte: the hardest case), a file
refused on its last line, quoted cells, and headers of 20,000 and 100,000 columns (refused: the
column cap and the duplicate check are what is timed).

Run: python benchmarks/bench_upload.py
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def numeric_csv(size: int, columns: int = 8, *, short: bool = False) -> bytes:
    """A header and numeric rows, cut to about ``size`` bytes at a line end; ``short``: one-digit
    cells (the most cells per byte, the hardest case)."""
    cells = [str(k % 2) if short else f"{0.1234567 * (k + 1):.7f}" for k in range(columns - 1)]
    row = ",".join(cells) + ",1\n"
    header = ",".join(f"x{k}" for k in range(columns - 1)) + ",label\n"
    body = row * ((size - len(header)) // len(row))
    return (header + body).encode()


def wide_csv(columns: int) -> bytes:
    header = ",".join(f"c{k}" for k in range(columns))
    return (header + "\n" + ",".join("1" for _ in range(columns)) + "\n").encode()


def measure(path: str) -> None:
    """In a child process: read the file twice, timed, then under tracemalloc (numpy reports its
    arrays to it) for the peak memory the parse allocates; print both."""
    from noisecore.tasks import read_table

    content = Path(path).read_bytes()

    def parse() -> str:
        try:
            _, values = read_table(content, source="bench.csv")
        except ValueError as exc:
            return f"refused: {str(exc)[:70]}"
        return f"{values.shape[0]} rows x {values.shape[1]} columns"

    start = time.perf_counter()
    outcome = parse()
    seconds = time.perf_counter() - start
    tracemalloc.start()
    parse()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(f"{seconds:.2f}\t{peak / 2**20:.0f}\t{outcome}")


def main() -> None:
    from dashboard.uploads import MAX_UPLOAD_BYTES

    cases = {
        f"largest allowed ({MAX_UPLOAD_BYTES / 1e6:.1f} MB), 8 long cells a row": numeric_csv(MAX_UPLOAD_BYTES),
        f"largest allowed ({MAX_UPLOAD_BYTES / 1e6:.1f} MB), 400 one-digit cells a row": numeric_csv(
            MAX_UPLOAD_BYTES, 400, short=True
        ),
        "19.9 MB, 400 one-digit cells a row": numeric_csv(19_900_000, 400, short=True),
        f"largest allowed ({MAX_UPLOAD_BYTES / 1e6:.1f} MB), 2 one-digit cells a row": numeric_csv(
            MAX_UPLOAD_BYTES, 2, short=True
        ),
        "19.9 MB, 2 one-digit cells a row": numeric_csv(19_900_000, 2, short=True),
        "largest allowed, 2 one-digit cells a row, a bad cell on the last line": numeric_csv(
            MAX_UPLOAD_BYTES - 10, 2, short=True
        )
        + b"1,x\n",
        'largest allowed, 2 one-digit cells a row, quoted ("1")': numeric_csv(
            MAX_UPLOAD_BYTES * 3 // 5, 2, short=True
        ).replace(b"\n0,", b'\n"0",'),
        "20,000 columns": wide_csv(20_000),
        "100,000 columns": wide_csv(100_000),
    }
    print("case\tsize (MB)\tparse (s)\tpeak added (MB)\tpeak / size\toutcome")
    with tempfile.TemporaryDirectory() as folder:
        for name, content in cases.items():
            path = Path(folder) / "case.csv"
            path.write_bytes(content)
            out = subprocess.run(
                [sys.executable, __file__, "--child", str(path)], capture_output=True, text=True, check=True, cwd=ROOT
            ).stdout.strip()
            seconds, peak, outcome = out.split("\t")
            ratio = float(peak) * 2**20 / len(content)
            print(f"{name}\t{len(content) / 1e6:.2f}\t{seconds}\t{peak}\t{ratio:.1f}\t{outcome}")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        measure(sys.argv[2])
    else:
        main()
