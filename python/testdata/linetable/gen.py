"""Generate the line table test data of python/linetable_test.go.

Run with each CPython whose tables the reader decodes:

    python3.X gen.py OUTDIR [SEEDDIR]

It compiles one fixed sample source (built here, so every version compiles
the same text), walks the code objects of its module, and writes
OUTDIR/3.X.json (or 3.X.json.gz when large): a list with, per code object,
its name, co_firstlineno, line table in hex (co_lnotab on 3.9, co_linetable
from 3.10) and the expected line of every instruction offset, in the unit
the reader is given offsets in: bytes on 3.9 and 3.10 (step 2), code units
from 3.11. A line of None is written as 0.

The expected lines are CPython's own: PyCode_Addr2Line (called through
ctypes) and, cross-checked against it, dis.findlinestarts on 3.9, co_lines()
from 3.10 and co_positions() from 3.11. The script stops if they disagree.

With SEEDDIR it also writes seeds of FuzzLine (go test fuzz v1 files): a few
of this version's real tables, and version-independent garbage.

From 3.11, the sample is compiled a second time in a child interpreter run
with -X no_debug_ranges, whose tables use the no-column form (kind 13) the
normal compiler hardly emits; those code objects' names start "nodebug:".
"""

import ctypes
import dis
import gzip
import json
import os
import subprocess
import sys

VERSION = "%d.%d" % sys.version_info[:2]
V = sys.version_info[:2]

# Offsets of the line table formats, as lineFormat in linetable.go.
FORMAT = 1 if V == (3, 9) else 2 if V == (3, 10) else 3


def long_function():
    """A function of more than 300 lines: one loop around all of it (the
    jump back is a large negative line delta), a gap of 300 comment lines
    (a line delta over 255 in one step), and a line whose bytecode is far
    longer than 255 bytes (offset deltas over 255)."""
    out = ["def long_function(n):", "    total = 0", "    for i in range(n):"]
    for k in range(120):
        if k % 10 == 3:
            out.append("        if i %% %d == 0:" % (k + 2))
            out.append("            total += %d" % k)
        elif k % 10 == 7:
            out.append("        total = (total +")
            out.append("                 %d *" % k)
            out.append("                 i)")
        else:
            out.append("        total += i * %d" % k)
    out.append("        # a long gap follows")
    out.extend("        # gap line %d" % k for k in range(300))
    terms = " + ".join("f%d(i)" % k for k in range(60))
    out.append("        total += " + terms.replace("f", "abs").replace("abs", "int", 30))
    out.append("    return total")
    return "\n".join(out) + "\n"


def wide_function():
    """Expressions starting at many columns, below 80 (short forms 0-9),
    between 80 and 127 (one-line forms) and beyond (long forms)."""
    out = ["def wide_function(a, b, c):"]
    expr = " + ".join("a * %d" % k for k in range(60))
    out.append("    x = " + expr)
    out.append("    y = (" + ", ".join("b[%d]" % k for k in range(50)) + ")")
    out.append("    if a:")
    out.append("        z = " + " - ".join("c.f%d(a)" % k for k in range(30)))
    out.append("    else:")
    out.append("        z = [")
    out.extend("            a + %d," % k for k in range(10))
    out.append("        ]")
    out.append("    return x, y, z")
    return "\n".join(out) + "\n"


SAMPLE = '''\
"""Sample module of gen.py: its code objects' line tables are the test data."""
import functools

CONSTANT = [x * 2 for x in range(10)]
square = lambda v: (v *
                    v)


def decorator(f):
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        return f(*args, **kwargs)
    return wrapper


@decorator
def decorated(a,
              b=2,
              *c):
    return (a +
            b +
            len(c))


def multiline_call(x):
    return max(
        x,
        min(
            x + 1,
            x - 1,
        ),
        abs(
            x),
    )


def generator(n):
    i = 0
    while i < n:
        yield i
        i += 1
    yield from range(n)


def comprehensions(xs):
    a = [x for x in xs if x]
    b = {x: y
         for x, y in zip(xs, xs)}
    c = {x for x in xs}
    d = list(x
             for x in xs)
    return a, b, c, d


def exceptions(x):
    try:
        y = 1 / x
    except ZeroDivisionError as e:
        y = str(e)
    except (TypeError,
            ValueError):
        raise
    else:
        y += 1
    finally:
        x = None
    with open(__file__) as f, \\
         open(__file__) as g:
        pass
    return y


async def coroutine(aw):
    async with aw as v:
        await v
    async for w in aw:
        return w


class Klass:
    attr = 1

    def method(self):
        return self.attr

    @property
    def prop(self):
        return (lambda:
                self.attr)()


def closure():
    v = 0
    def inner():
        nonlocal v
        v += 1
        return v
    return inner


def empty():
    pass


def loops(n):
    s = 0
    for i in range(n):
        for j in range(i):
            if j % 3 == 0:
                continue
            if j > 100:
                break
            s += j
    else:
        s = -s
    while n > 0:
        n -= 1
    return s


if __name__ == "__main__":
    print(decorated(1), square(2))
'''

MATCH = '''

def matching(v):
    match v:
        case [a, b, *rest]:
            return a + b
        case {"k": x} if x > 0:
            return x
        case Klass(attr=1):
            return 1
        case _:
            return None
'''


def source():
    src = SAMPLE + "\n\n" + long_function() + "\n\n" + wide_function()
    if V >= (3, 10):
        src += MATCH
    # Module code that ends far from where it started, after a long gap.
    src += "\n" * 400 + "FAR = 1\n"
    return src


def codes(co):
    """co and every code object among its constants, depth first."""
    yield co
    for c in co.co_consts:
        if isinstance(c, type(co)):
            yield from codes(c)


def addr2line(co, addr):
    f = ctypes.pythonapi.PyCode_Addr2Line
    f.argtypes = [ctypes.py_object, ctypes.c_int]
    f.restype = ctypes.c_int
    return f(co, addr)


def table(co):
    return co.co_lnotab if V == (3, 9) else co.co_linetable


def expected(co):
    """[[offset, line], ...] of every instruction offset of co."""
    n = len(co.co_code)
    if V == (3, 9):
        starts = list(dis.findlinestarts(co))
        out = []
        for off in range(0, n, 2):
            line = addr2line(co, off)
            ref = [l for o, l in starts if o <= off]
            ref = ref[-1] if ref else co.co_firstlineno
            assert ref == line, (co, off, ref, line)
            out.append([off, line])
        return out
    ranges = list(co.co_lines())
    positions = list(co.co_positions()) if V >= (3, 11) else None
    # 3.10 offsets are bytes, 3.11+ ones code units of 2 bytes.
    unit = 1 if V == (3, 10) else 2
    out = []
    for off in range(0, n // unit, 2 // unit):
        byte = off * unit
        got = [l for s, e, l in ranges if s <= byte < e]
        assert len(got) <= 1, (co, off, got)
        line = got[0] if got else None
        c = addr2line(co, byte)
        assert (line if line is not None else -1) == c, (co, off, line, c)
        # co_positions() gives nothing at all for an empty table.
        if positions:
            assert positions[off][0] == line, (co, off, positions[off], line)
        out.append([off, line or 0])
    return out


def records(src, prefix=""):
    module = compile(src, "sample.py", "exec")
    out = []
    for co in codes(module):
        out.append(record(co, prefix))
    # A table with no entry at all: 3.9 gives every offset the first line,
    # 3.10+ no line.
    e = [c for c in codes(module) if c.co_name == "long_function"][0]
    e = e.replace(co_lnotab=b"") if V == (3, 9) else e.replace(co_linetable=b"")
    out.append(record(e, prefix + "emptytable:"))
    return out


def record(co, prefix):
    name = getattr(co, "co_qualname", co.co_name)
    return {
        "version": VERSION,
        "name": prefix + name,
        "firstlineno": co.co_firstlineno,
        "table": table(co).hex(),
        "lines": expected(co),
    }


def stats(recs):
    """What the tables exercise, to see the sample still covers the cases."""
    s = {}

    def add(k):
        s[k] = s.get(k, 0) + 1

    for r in recs:
        t = bytes.fromhex(r["table"])
        if FORMAT in (1, 2):
            for i in range(0, len(t) - 1, 2):
                d = t[i + 1] - 256 if t[i + 1] >= 128 else t[i + 1]
                if d == -128 and FORMAT == 2:
                    add("noline")
                elif d < 0:
                    add("negative")
                if t[i] == 0:
                    add("zero-offset-step")
                if t[i] == 255 or t[i] == 254:
                    add("max-offset-step")
                if d == 127:
                    add("max-line-step")
        else:
            for b in t:
                if b & 0x80:
                    add("kind%d" % ((b >> 3) & 15))
    return dict(sorted(s.items()))


def go_bytes(b):
    return '[]byte("' + "".join("\\x%02x" % c for c in b) + '")'


def seed(dirname, name, fmt, tab, first, off):
    with open(os.path.join(dirname, name), "w") as f:
        f.write("go test fuzz v1\n")
        f.write("byte('\\x%02x')\n" % fmt)
        f.write(go_bytes(tab) + "\n")
        f.write("int(%d)\n" % first)
        f.write("int(%d)\n" % off)


def seeds(dirname, recs):
    os.makedirs(dirname, exist_ok=True)
    tag = VERSION.replace(".", "")
    picks = {}
    for r in recs:
        for want in ("long_function", "exceptions", "generator", "<module>",
                     "nodebug:comprehensions"):
            if r["name"] == want:
                picks[want] = r
    for want, r in sorted(picks.items()):
        n = len(r["lines"])
        off = r["lines"][n // 2][0]
        name = "real%s_%s" % (tag, want.replace("<", "").replace(">", "").replace(":", "_"))
        seed(dirname, name, FORMAT, bytes.fromhex(r["table"]), r["firstlineno"], off)
    # Garbage, the same from every version.
    garbage = {
        "empty": (3, b"", 1, 0),
        "format0": (0, b"\x01\x02", 1, 0),
        "format9": (9, b"\x01\x02", 1, 0),
        "odd39": (1, b"\x02\x01\x04", 7, 2),
        "noline310": (2, b"\x04\x80\x00\x7f\x06\x80", 5, 4),
        "bigsteps39": (1, b"\xff\x00\xff\x7f\xff\x80", 1, 300),
        # A long form whose start line varint never ends.
        "truncvarint": (3, b"\xf0\xc1\xc1\xc1\xc1\xc1\xc1\xc1\xc1", 1, 0),
        # A varint too long for 32 bits.
        "longvarint": (3, b"\xf0\x41\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x00\x00\x00", 1, 0),
        # An entry that does not start with its high bit.
        "nohighbit": (3, b"\x78\x02\x7f", 1, 0),
        "onelinetrunc": (3, b"\xd0\x05", 1, 0),
        "hugefirstline": (3, b"\x80\x00", 1 << 62, 0),
        "negfirstline": (1, b"\x02\x01", -5, 2),
        "negoffset": (3, b"\xf8", 3, -1),
        "hugeoffset": (1, b"\x02\x01", 3, 1 << 40),
        "allff": (3, b"\xff" * 64, 1, 100),
    }
    for name, (fmt, tab, first, off) in garbage.items():
        seed(dirname, "garbage_" + name, fmt, tab, first, off)


def main():
    if sys.argv[1:] == ["--child"]:
        json.dump(records(source(), "nodebug:"), sys.stdout)
        return
    outdir = sys.argv[1]
    recs = records(source())
    if V >= (3, 11):
        child = subprocess.run(
            [sys.executable, "-X", "no_debug_ranges", __file__, "--child"],
            check=True, stdout=subprocess.PIPE)
        recs += json.loads(child.stdout)
    data = json.dumps(recs, separators=(",", ":")).replace('{"version"', '\n{"version"')
    data = data.encode() + b"\n"
    os.makedirs(outdir, exist_ok=True)
    base = os.path.join(outdir, VERSION + ".json")
    for stale in (base, base + ".gz"):
        if os.path.exists(stale):
            os.remove(stale)
    if len(data) > 64 << 10:
        # mtime 0 and no file name: the same input gives the same bytes.
        with open(base + ".gz", "wb") as raw:
            with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as f:
                f.write(data)
        base += ".gz"
    else:
        with open(base, "wb") as f:
            f.write(data)
    if len(sys.argv) > 2:
        seeds(sys.argv[2], recs)
    n = sum(len(r["lines"]) for r in recs)
    print("%s: %d code objects, %d offsets, %d bytes; %s" % (
        base, len(recs), n, os.path.getsize(base), stats(recs)))


if __name__ == "__main__":
    main()
