"""Step kinds as the C executor receives them: one typed definition per kind, its fields and
its own ``emit``.

Each ``Spec`` subclass is one kind of csrc/program.h's step table (``pb_step_kind``): its class
attribute ``kind`` names the table entry, and the kind's C parser reads the fields by name
(``pb_field``), so no positional format is kept in sync by hand between the two languages.
``emit(s, e)`` builds the spec of a planned ``values.Step`` (``e``: the ``Emitter`` giving
operand references and emitting nested steps). ``KernelStep`` is also the planned step itself
(a typed step); the older kinds are still planned as ``Step``s with an ``info`` dict.

An operand reference (``Emitter.ref``) is ``(buffer kind, index, byte offset[, ((loop level,
byte stride), ...)])``, the one format every kind shares (parsed by ``pb_parse_ref``).
"""
from __future__ import annotations

import math
from typing import Any, Callable, ClassVar, Protocol, Sequence

from .blocks import walk
from .values import Step, View


class Emitter(Protocol):
    """What a spec's ``emit`` needs from the program being built."""

    def ref(self, v: View) -> tuple:
        """The operand reference of a view."""

    def step(self, s: Step, streamed: frozenset = frozenset()) -> "Spec":
        """The spec of a nested step (its ``streamed`` buffers may be written past the caches)."""


class Spec:
    """One step as the C step table parses it: ``kind`` and the fields in ``__slots__``."""

    __slots__ = ()
    kind: ClassVar[str] = ""

    def __init__(self, **fields: Any):
        for name in self.__slots__:
            setattr(self, name, fields.pop(name))
        if fields:
            raise TypeError(f"{type(self).__name__}: unknown fields {sorted(fields)}")

    def __repr__(self) -> str:
        body = ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__slots__)
        return f"{type(self).__name__}({body})"


class Operand(Spec):
    """An operand handed whole to a kernel or a callback: reference, dtype, shape, strides."""

    __slots__ = ("ref", "dtype", "shape", "strides")

    @classmethod
    def of(cls, v: View, e: Emitter) -> "Operand":
        return cls(ref=e.ref(v), dtype=v.dtype, shape=tuple(v.shape), strides=tuple(v.strides))


class RegionOp(Spec):
    """One loop of a region: ``loop`` kind (SCHEDULE's ewise/cast/copy/select/reduce/pair) with
    its table indices ``a``, ``b`` and ``params``; ``operands``: region operand numbers (inputs
    then the output; -(k + 1) is scratch slot k); ``items``: their element sizes."""

    __slots__ = ("loop", "a", "b", "params", "operands", "items")


class RegionInit(Spec):
    """A reduction accumulator: region operand ``operand`` (``nelems`` contiguous elements)
    starts as the identity of reduction ``op`` for dtype ``slot``."""

    __slots__ = ("operand", "op", "slot", "nelems")


class Region(Spec):
    """Element-wise loops fused into one pass over ``shape`` (csrc/step_region.c): operands
    ``refs`` with byte ``strides`` over the shape and element sizes ``items``; ``ops`` in order;
    ``grain``: elements per thread worth a split; ``inits``: accumulators (the region then runs
    on one thread); ``stream``: outputs no later step reads (written with streaming stores)."""

    __slots__ = ("shape", "refs", "strides", "items", "ops", "grain", "inits", "stream")
    kind = "region"

    @classmethod
    def emit(cls, s: Step, e: Emitter, streamed: frozenset = frozenset()) -> "Region":
        if s.kind == "ewise":  # one loop: a region of one op
            s = Step("region", s.ins, s.outs, {"members": [s], "shape": s.info["shape"],
                                                "grain": s.info["grain"]}, s.label)
        shape = tuple(s.info["shape"])
        ext = list(s.ins) + list(s.outs)
        ext_ids: dict = {}
        for k, v in enumerate(ext):
            ext_ids.setdefault((v.buf.id, v.offset, v.strides), k)
        # scratch slots for values that stay inside the region, reused after their last read
        members = s.info["members"]
        last_read: dict[int, int] = {}
        for i, m in enumerate(members):
            for v in m.ins:
                last_read[v.buf.id] = i
        slot_of: dict[int, int] = {}
        free: list[int] = []
        nslots = 0
        ops = []
        for i, m in enumerate(members):
            ids, items = [], []
            for v in m.ins:
                k = ext_ids.get((v.buf.id, v.offset, v.strides))
                ids.append(k if k is not None else -(slot_of[v.buf.id] + 1))
                items.append(v.itemsize)
            o = m.outs[0]
            k = ext_ids.get((o.buf.id, o.offset, o.strides))
            if k is None:
                if free:
                    slot = free.pop()
                else:
                    slot, nslots = nslots, nslots + 1
                slot_of[o.buf.id] = slot
                k = -(slot + 1)
            for v in m.ins:  # inputs read for the last time free their slots (after the write)
                if v.buf.id in slot_of and last_read.get(v.buf.id) == i and \
                        -(slot_of[v.buf.id] + 1) != k:
                    free.append(slot_of.pop(v.buf.id))
            ids.append(k)
            items.append(o.itemsize)
            lk, a, b = m.info["loop"]
            ops.append(RegionOp(loop=lk, a=a, b=b, params=tuple(m.info["params"]),
                                operands=tuple(ids), items=tuple(items)))
        inits = tuple(
            RegionInit(operand=ext_ids[(m.outs[0].buf.id, m.outs[0].offset, m.outs[0].strides)],
                       op=m.info["init"][0], slot=m.info["init"][1], nelems=m.info["init"][2])
            for m in members if "init" in m.info)
        stream = tuple(k for k, v in enumerate(ext) if v.buf.id in streamed and v in s.outs)
        return cls(shape=shape, refs=tuple(e.ref(v) for v in ext),
                   strides=tuple(_bstrides(v, shape) for v in ext),
                   items=tuple(v.itemsize for v in ext), ops=tuple(ops),
                   grain=int(s.info["grain"]), inits=inits, stream=stream)


def _bstrides(v: View, shape: tuple) -> tuple:
    if v.shape == shape:
        return v.strides
    return (0,) * len(shape)  # a 0-d operand broadcast over the region


def _sliceable(epi: "Region", prod: View, reads: tuple, dims: tuple) -> bool:
    """The epilogue reads the (M, N) product row-major, element for element, so any rows (or
    columns) of it can run as soon as the same rows (columns) of the product exist."""
    bt, m, n, _ = dims
    es = prod.itemsize
    if epi.inits:
        return False  # a reduction's accumulator spans every slice
    return bt == 1 and epi.shape == (m, n) and all(
        (m < 2 or epi.strides[k][0] == n * es) and (n < 2 or epi.strides[k][1] == es)
        for k in reads)


def _rows_merged(shape: tuple, strides: tuple) -> int | None:
    """The byte stride of the leading dims of ``shape`` merged into one (their elements in C
    order one stride apart), or None when they do not merge."""
    dims = [(d, st) for d, st in zip(shape, strides) if d != 1]
    for (_, outer), (d, inner) in zip(dims, dims[1:]):
        if outer != inner * d:
            return None
    return dims[-1][1] if dims else 0


def _as_rows(epi: "Region", m: int, n: int) -> "Region":
    """An epilogue over (..., N) whose leading dims flatten to the product's M rows (``x @ w +
    b`` with x (B, T, D): the product is (B*T, N), its bias-add region (B, T, N)) as the same
    region over (M, N), when every operand's leading dims merge; else ``epi`` unchanged."""
    shape = epi.shape
    if len(shape) < 3 or shape[-1] != n or math.prod(shape[:-1]) != m:
        return epi
    strides = []
    for st in epi.strides:
        row = _rows_merged(shape[:-1], st[:-1])
        if row is None:
            return epi
        strides.append((row, st[-1]))
    return Region(**{**{k: getattr(epi, k) for k in Region.__slots__}, "shape": (m, n),
                     "strides": tuple(strides)})


class Dot(Spec):
    """out (Bt, M, N) = a (Bt, M, K) @ b (Bt, K, N) (products.c): cast ``slots`` (a, b, out),
    ``dims`` (Bt, M, N, K), ``refs`` and byte ``strides`` (batch, row, col) of a, b, out; an
    ``epilogue`` region run on the product (or None); ``reads``: when the epilogue reads the
    product element for element (it may then follow the product's rows), its operands that
    read it; ``keep``: steps after the epilogue read the product too, so it is written whole
    (else the kernel may leave strips only the epilogue reads in scratch)."""

    __slots__ = ("slots", "dims", "refs", "strides", "epilogue", "reads", "keep")
    kind = "dot"

    @classmethod
    def emit(cls, s: Step, e: Emitter, streamed: frozenset = frozenset()) -> "Dot":
        a, b, c = s.ins[0], s.ins[1], s.outs[0]
        epi = s.info.get("epilogue")
        dims = tuple(s.info["dims"])
        spec, reads = None, ()
        if epi is not None:
            spec = _as_rows(Region.emit(epi, e, streamed), dims[1], dims[2])
            reads = tuple(k for k, v in enumerate(epi.ins) if v.buf is c.buf and
                          v.offset == c.offset)
            if len(reads) != sum(v.buf is c.buf for v in epi.ins) or \
                    not _sliceable(spec, c, reads, dims):
                reads = ()
        return cls(slots=tuple(s.info["slots"]), dims=dims,
                   refs=(e.ref(a), e.ref(b), e.ref(c)), strides=(a.strides, b.strides, c.strides),
                   epilogue=spec, reads=reads, keep=int(s.info.get("keep_product", False)))


class Reduce(Spec):
    """A table reduction (csrc/step_reduce.c): row ``op`` for dtype ``slot`` of x (``shape``,
    byte ``xstrides``) over the axes flagged in ``reduced``; ``refs`` (x, acc, out), acc and out
    C-contiguous with element sizes ``acc_item`` and ``item``."""

    __slots__ = ("op", "slot", "shape", "reduced", "refs", "xstrides", "item", "acc_item")
    kind = "reduce"

    @classmethod
    def emit(cls, s: Step, e: Emitter, streamed: frozenset = frozenset()) -> "Reduce":
        x, out = s.ins[0], s.outs[0]
        acc = s.info["acc"]
        axes = set(s.info["axes"])
        return cls(op=s.info["op"], slot=s.info["slot"], shape=tuple(x.shape),
                   reduced=tuple(int(d in axes) for d in range(x.ndim)),
                   refs=(e.ref(x), e.ref(acc), e.ref(out)), xstrides=tuple(x.strides),
                   item=out.itemsize, acc_item=acc.itemsize)


class DStart(Spec):
    """A moving dimension of a dcopy: its start index (0-d integer operand ``ref`` of ``item``
    bytes, ``signed``), clamped to [0, ``limit``], moves the side by start * ``stride``
    bytes."""

    __slots__ = ("ref", "item", "signed", "limit", "stride")


class DCopy(Spec):
    """A copy of ``shape`` (csrc/step_dcopy.c) from ``refs[0]`` to ``refs[1]`` (byte
    ``strides`` of each, element size ``item``) whose destination (``dst_moves``) or source
    moves by ``starts`` read at run time."""

    __slots__ = ("dst_moves", "shape", "refs", "strides", "item", "starts")
    kind = "dcopy"

    @classmethod
    def emit(cls, s: Step, e: Emitter, streamed: frozenset = frozenset()) -> "DCopy":
        src, dst = s.ins[0], s.outs[0]
        starts = tuple(DStart(ref=e.ref(s.ins[k]), item=s.ins[k].itemsize,
                              signed=int(s.ins[k].dtype.kind == "i"), limit=lim, stride=st)
                       for k, lim, st in s.info["dyn"])
        return cls(dst_moves=int(s.info["side"] == "dst"), shape=tuple(src.shape),
                   refs=(e.ref(src), e.ref(dst)), strides=(src.strides, dst.strides),
                   item=src.itemsize, starts=starts)


def _write_only_slices(steps: list) -> frozenset:
    """The ys[i] slices a loop body writes and none of its steps reads (a residual saved for
    the backward pass): their regions may stream them past the caches."""
    reads = {v.buf.id for st in walk(steps) for v in st.ins}
    return frozenset(o.buf.id for st in steps for o in st.outs
                     if o.buf.kind == "slice" and o.buf.loops and o.buf.id not in reads)


class Scan(Spec):
    """The ``body`` block run ``length`` times (csrc/loops.c), backwards when ``reverse``; its
    slices move with loop ``level`` (the number of loops around this one)."""

    __slots__ = ("level", "length", "reverse", "body")
    kind = "scan"

    @classmethod
    def emit(cls, s: Step, e: Emitter, streamed: frozenset = frozenset()) -> "Scan":
        steps = s.info["blocks"][0].steps
        wo = _write_only_slices(steps)
        return cls(level=s.info["level"], length=s.info["length"], reverse=bool(s.info["reverse"]),
                   body=tuple(e.step(x, wo) for x in steps))


class While(Spec):
    """The ``cond`` block computing the bool ``pred``, then ``body``, until it is false."""

    __slots__ = ("pred", "cond", "body")
    kind = "while"

    @classmethod
    def emit(cls, s: Step, e: Emitter, streamed: frozenset = frozenset()) -> "While":
        cond, body = (tuple(e.step(x) for x in b.steps) for b in s.info["blocks"])
        return cls(pred=e.ref(s.info["pred"]), cond=cond, body=body)


class Cond(Spec):
    """One of ``branches`` (blocks), picked by the int32 ``index`` (clamped)."""

    __slots__ = ("index", "branches")
    kind = "cond"

    @classmethod
    def emit(cls, s: Step, e: Emitter, streamed: frozenset = frozenset()) -> "Cond":
        return cls(index=e.ref(s.info["index"]),
                   branches=tuple(tuple(e.step(x) for x in b.steps) for b in s.info["blocks"]))


class Par(Spec):
    """Dot or scan steps touching disjoint memory, run concurrently (products.c)."""

    __slots__ = ("block",)
    kind = "par"

    @classmethod
    def emit(cls, s: Step, e: Emitter, streamed: frozenset = frozenset()) -> "Par":
        return cls(block=tuple(e.step(x) for x in s.info["members"]))


class Pipe(Spec):
    """A scan with products over its iterations on another thread (csrc/pipe.c): ``scan``,
    the products and sums over its iterations ``dots`` with their K per iteration ``kper`` and
    column blocks ``parts``, ``every`` iterations per chunk, and a ``producer`` product of its
    xs (or None) with ``rper`` rows per iteration."""

    __slots__ = ("scan", "dots", "kper", "parts", "every", "producer", "rper")
    kind = "pipe"

    @classmethod
    def emit(cls, s: Step, e: Emitter, streamed: frozenset = frozenset()) -> "Pipe":
        prod = s.info["producer"]
        return cls(scan=e.step(s.info["scan"]), dots=tuple(e.step(x) for x in s.info["members"]),
                   kper=tuple(s.info["kper"]), parts=tuple(s.info["parts"]),
                   every=s.info["every"], producer=e.step(prod) if prod is not None else None,
                   rper=s.info["rper"])


class Py(Spec):
    """A user Python callback (csrc/step_py.c): ``callable`` gets views of the first ``nin``
    ``operands`` and returns a tuple of arrays for the others."""

    __slots__ = ("callable", "operands", "nin")
    kind = "py"

    @classmethod
    def emit(cls, s: Step, e: Emitter, streamed: frozenset = frozenset()) -> "Py":
        return cls(callable=s.info["callable"],
                   operands=tuple(Operand.of(v, e) for v in list(s.ins) + list(s.outs)),
                   nin=len(s.ins))


class Kernel(Spec):
    """A registered C kernel on fixed operands (csrc/kernel_step.c): its handle ``kernel``,
    ``ins`` and ``outs`` (``Operand``s) and its packed ``params``; an ``epilogue`` region run on
    output 0 (or None) and ``reads``, as ``Dot``'s: the kernel runs it on the rows it reports
    finished when the epilogue is (rows, row) over output 0 (``kernel.follows_rows``), else the
    step runs it after the kernel."""

    __slots__ = ("kernel", "ins", "outs", "params", "epilogue", "reads")
    kind = "kernel"


class KernelStep(Step):
    """A registered C kernel (csrc/pb_kernel.h) run natively on fixed operands, GIL released:
    the "kernel" step (csrc/kernel_step.c).

    Attributes:
      kernel: the kernel's handle (``kernels.kernel(name)``).
      params: its packed parameter struct.
    """

    __slots__ = ("kernel", "params", "nin", "nout")

    def __init__(self, kernel: Any, ins: Sequence[View], outs: Sequence[View], params: bytes,
                 label: str):
        super().__init__("kernel", ins, outs, {}, label)
        self.kernel = kernel
        self.params = bytes(params)
        # the kernel's own operands: ins and outs grow by a fused epilogue's (fuse_epilogues)
        self.nin, self.nout = len(self.ins), len(self.outs)

    def emit(self, e: Emitter, streamed: frozenset = frozenset()) -> Kernel:
        """Its ``Kernel`` spec."""
        epi = self.info.get("epilogue")
        spec, reads = None, ()
        if epi is not None:
            out = self.outs[0]
            row = out.shape[-1] if out.shape else 1
            spec = _as_rows(Region.emit(epi, e, streamed), out.size // max(row, 1), row)
            reads = tuple(k for k, v in enumerate(epi.ins) if v.buf is out.buf and
                          v.offset == out.offset)
            if len(reads) != sum(v.buf is out.buf for v in epi.ins) or \
                    not _sliceable(spec, out, reads, (1, out.size // max(row, 1), row, 0)):
                reads = ()
        return Kernel(kernel=self.kernel,
                      ins=tuple(Operand.of(v, e) for v in self.ins[:self.nin]),
                      outs=tuple(Operand.of(v, e) for v in self.outs[:self.nout]),
                      params=self.params, epilogue=spec, reads=reads)

    def work(self) -> int:
        """Elements touched: what decides whether a program releases the GIL."""
        return sum(v.size for v in self.ins) + sum(v.size for v in self.outs)


# The spec of each planned step kind ("ewise": a one-op region).
SPECS: dict[str, Callable[..., Spec]] = {
    "ewise": Region.emit, "region": Region.emit, "dot": Dot.emit, "reduce": Reduce.emit,
    "dcopy": DCopy.emit, "scan": Scan.emit, "while": While.emit, "cond": Cond.emit,
    "par": Par.emit, "pipe": Pipe.emit, "py": Py.emit}
