"""The compiled object: a Jaxpr lowered, fused, planned and handed to the C executor.

``compile_jaxpr`` runs the pipeline (lower -> outputs -> fusion -> epilogues -> memory plan) and
builds a ``_cpu.Program``; ``CompiledProgram`` keeps it with what introspection needs (the
schedule text, the memory plan, cost figures).
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from ....config import config
from ....tracer.dtypes import short_name
from ....tracer.ir import Jaxpr
from .. import kernels
from . import control, fusion, layout, memory, parallel, rows
from .copies import copy_step
from .lower import SCHEDULE, lower_program
from .steps import SPECS, KernelStep, Spec
from .values import Step, View

# Below this many elements of work a program keeps the GIL (releasing it costs ~40 ns, more
# than the work of a tiny program).
NOGIL_MIN = 16384
_KIND = {"arena": SCHEDULE["arena"], "input": SCHEDULE["input"], "output": SCHEDULE["output"],
         "const": SCHEDULE["const"]}


class CompiledProgram:
    """A Jaxpr compiled to one C schedule.

    Attributes:
      program: the ``_cpu.Program`` (``run(*inputs) -> tuple of ndarrays``).
      steps: the schedule (``values.Step``), in execution order.
      fallbacks: names of the primitives (or kernels) whose steps run through Python objects
        (callback steps), marked in ``as_text()``; ``compiler.fallbacks`` counts them
        across programs.
    """

    def __init__(self, name: str, program: Any, steps: list[Step], mem: dict, in_avals: list,
                 out_avals: list, fallbacks: list[str], donate: list[int], alias: list):
        self.name = name
        self.program = program
        self.run = program.run
        self.steps = steps
        self.mem = mem
        self.in_avals = in_avals
        self.out_avals = out_avals
        self.fallbacks = fallbacks
        self.donate = donate
        self.alias = alias

    # ---- introspection ----
    def as_text(self) -> str:
        """The schedule: one line per step (kernel, operands with arena offsets and shapes; the
        ops of fused regions), then the memory plan."""
        lines = [f"program {self.name}: {len(self.steps)} steps, GIL "
                 f"{'released' if self.program.nogil else 'held'}"]
        if self.fallbacks:
            lines[0] += (f", {len(self.fallbacks)} fallback steps through Python "
                         f"({', '.join(self.fallbacks)})")
        for i, s in enumerate(self.steps):
            lines.extend(_step_text(i, s))
        m = self.memory_analysis()
        lines.append(f"memory: arena {m.temp_size_in_bytes} bytes (intermediates without reuse: "
                     f"{self.mem['naive_bytes']}), region scratch {self.program.scratch_bytes} "
                     f"bytes, arguments {m.argument_size_in_bytes}, outputs "
                     f"{m.output_size_in_bytes}")
        if self.program.streamed_outputs:
            lines.append(f"  streamed: {self.program.streamed_outputs} outputs written past the "
                         "caches (non-temporal stores)")
        for s, src, dst in self.mem["inplace"]:
            lines.append(f"  in place: {s.label} writes {_buf(dst)} over {_buf(src)}")
        for k, j in enumerate(self.donate):
            if j >= 0:
                lines.append(f"  donated: output {k} reuses input {j}")
        for k, a in enumerate(self.alias):
            if a is not None:
                lines.append(f"  output {k} is a view of {_opnd(a)}")
        return "\n".join(lines)

    def memory_analysis(self) -> "MemoryAnalysis":
        return MemoryAnalysis(
            argument_size_in_bytes=sum(a.size * a.dtype.itemsize for a in self.in_avals),
            output_size_in_bytes=sum(a.size * a.dtype.itemsize for a in self.out_avals),
            temp_size_in_bytes=int(self.mem["arena_bytes"]),
            alias_size_in_bytes=sum(self.out_avals[k].size * self.out_avals[k].dtype.itemsize
                                    for k, j in enumerate(self.donate) if j >= 0),
            generated_code_size_in_bytes=0,
            scratch_size_in_bytes=int(self.program.scratch_bytes))

    def cost_analysis(self) -> dict:
        flops, nbytes = 0.0, 0.0
        for s in self.steps:
            f, b = _cost(s)
            flops += f
            nbytes += b
        return {"flops": flops, "bytes accessed": nbytes}


class MemoryAnalysis:
    """Byte counts of a compiled program, with JAX's attribute names."""

    def __init__(self, **kw: int):
        self.__dict__.update(kw)

    def __repr__(self) -> str:
        return "MemoryAnalysis(" + ", ".join(f"{k}={v}" for k, v in self.__dict__.items()) + ")"


def _buf(b: Any) -> str:
    if b.kind == "slice":
        root, off, loops = b.root()
        terms = "".join(f" + i{lv}*{st}" for lv, st in loops)
        return f"{_buf(root)}[+{off}{terms}]"
    if b.kind == "arena":
        return f"arena[{b.offset}:{b.offset + b.nbytes}]"
    return f"{b.kind}{b.index}" if b.kind != "const" else "const"


def _opnd(v: View) -> str:
    where = _buf(v.buf)
    if v.buf.kind == "arena":
        where = f"arena@{v.buf.offset + v.offset}"
    elif v.offset:
        where += f"+{v.offset}"
    lay = "" if v.is_whole() or v.size <= 1 else f" strides={v.strides}"
    return f"{where}:{_short(v.dtype)}[{','.join(map(str, v.shape))}]{lay}"


def _short(dt: np.dtype) -> str:
    return short_name(dt)


def _step_text(i: int | None, s: Step, indent: str = "  ") -> list[str]:
    """A step's lines in the schedule text, numbered i (a par step's members are not)."""
    n = "" if i is None else f"{i}: "
    if s.kind == "par" and s.info["members"][0].kind == "scan":
        hi = s.info["members"][-1].info["rows"][1]
        lines = [f"{indent}{n}par (the scan's {hi} rows never mix: each thread runs it on its "
                 f"own; rows {', '.join('%d:%d' % m.info['rows'] for m in s.info['members'])}):"]
        for x in s.info["members"]:
            lines.extend(_step_text(None, x, indent + "     "))
        return lines
    if s.kind == "par":
        lines = [f"{indent}{n}par (each product whole on its own thread):"]
        for x in s.info["members"]:
            lines.extend(_step_text(None, x, indent + "     "))
        return lines
    if s.kind == "pipe":
        every, prod = s.info["every"], s.info["producer"]
        what = []
        if prod is not None:
            what.append("the scan reads its input as the first product makes it")
        if s.info["members"]:
            what.append("the products after it sum its iterations as it writes them")
        lines = [f"{indent}{n}pipe ({' and '.join(what)}, {every} iterations at a time):"]
        for x in ([prod] if prod is not None else []) + [s.info["scan"]] + s.info["members"]:
            lines.extend(_step_text(None, x, indent + "     "))
        return lines
    if s.kind in control.LOOPS:
        outs = ", ".join(_opnd(v) for v in s.outs)
        lines = [f"{indent}{n}{s.label} -> ({outs})"]
        names = {"scan": ["body"], "while": ["cond", "body"]}.get(
            s.kind, [f"branch {k}" for k in range(len(s.info["blocks"]))])
        for name, b in zip(names, s.info["blocks"]):
            lines.append(f"{indent}   {name}:")
            for j, x in enumerate(b.steps):
                lines.extend(_step_text(j, x, indent + "     "))
        return lines
    ins = ", ".join(_opnd(v) for v in s.ins)
    outs = ", ".join(_opnd(v) for v in s.outs)
    if s.kind == "region":
        head = f"{indent}{n}region[{len(s.info['members'])} ops] ({ins}) -> ({outs})"
        return [head, f"{indent}     fused: " + " ; ".join(m.label for m in s.info["members"])]
    if s.kind in ("dot", "kernel") and "epilogue" in s.info:
        e = s.info["epilogue"]
        head = "dot_general" if s.kind == "dot" else f"kernel {s.kernel.name}"
        return [f"{indent}{n}{head} ({ins}) -> ({outs})",
                f"{indent}     epilogue: " + " ; ".join(m.label for m in e.info["members"])]
    kind = {"py": "callback"}.get(s.kind, s.kind)
    mark = "  [fallback: Python callback, GIL held]" if s.kind == "py" else ""
    return [f"{indent}{n}{kind} {s.label} ({ins}) -> ({outs}){mark}"]


def _parts(s: Step) -> list[Step]:
    """The steps a par or pipe step runs."""
    return [x for x in [s.info.get("producer"), s.info.get("scan")] + s.info["members"]
            if x is not None]


def _cost(s: Step) -> tuple[float, float]:
    if s.kind in ("par", "pipe"):
        costs = [_cost(x) for x in _parts(s)]
        return sum(f for f, _ in costs), sum(b for _, b in costs)
    if s.kind in control.LOOPS:  # a loop body counts once per iteration (a while body once)
        per = [[_cost(x) for x in b.steps] for b in s.info["blocks"]]
        sums = [(sum(f for f, _ in p), sum(b for _, b in p)) for p in per]
        times = s.info["length"] if s.kind == "scan" else 1
        if s.kind == "cond":
            return max(sums)
        return times * sum(f for f, _ in sums), times * sum(b for _, b in sums)
    nbytes = sum(v.nbytes for v in s.ins) + sum(v.nbytes for v in s.outs)
    if s.kind == "dot":
        bt, m, n, k = s.info["dims"]
        f = 2.0 * bt * m * n * k
        if "epilogue" in s.info:
            f += _cost(s.info["epilogue"])[0]
        return f, nbytes
    if s.kind == "region":
        n = math.prod(s.info["shape"])
        return float(n * sum(m.info.get("ops", 1) for m in s.info["members"])), nbytes
    if s.kind == "reduce":
        return float(s.ins[0].size), nbytes
    if s.kind == "ewise":
        return float(math.prod(s.info["shape"])), nbytes
    return 0.0, nbytes


# ---- the pipeline ----

def _materialize_outputs(low: Any, outs: list[View]) -> tuple[list[View], list[Any]]:
    """Each program output gets storage: an output that is a view of an input, a constant or
    an earlier output is returned as a view of it (no copy); the arena buffer holding exactly
    an output becomes that output's buffer; anything else is copied into a fresh output.
    Returns the output views and, per output, the view it aliases (or None)."""
    result, alias = [], []
    for k, v in enumerate(outs):
        b = v.buf
        if b.kind in ("input", "const", "output"):
            result.append(v)
            alias.append(v)
            continue
        alias.append(None)
        if v.is_whole() and b.producer is not None:
            b.kind, b.index = "output", k
            result.append(v)
            continue
        dst = View.fresh(v.shape, v.dtype, "output", k)
        low.emit(copy_step(v, dst))
        result.append(dst)
    return result, alias


def compile_jaxpr(jaxpr: Jaxpr, consts: dict[int, np.ndarray], name: str = "jit",
                  donated: Sequence[int] = (), in_strides: Sequence[Any] | None = None,
                  strict: bool = False, flush_denormals: bool | None = None
                  ) -> CompiledProgram:
    """Compile ``jaxpr`` (no constvars): invars listed in ``consts`` are baked in as constants;
    the others are the program's inputs in order.

    Args:
      donated: invar indices whose buffers the program may reuse for outputs.
      in_strides: per program input, None (C-contiguous) or the byte strides it is compiled
        for (its kernels then read it in place).
      strict: an input of another layout raises ``LayoutError`` instead of being copied.
      flush_denormals: run with subnormals flushed to zero (None: ``config.jit_flush_denormals``).
    """
    low, outs, input_of = lower_program(jaxpr, consts, in_strides)
    layout.orient_products(low.steps, outs)
    outs, alias = _materialize_outputs(low, outs)
    steps = parallel.group_products(rows.split_rows(parallel.pipeline_scans(
        finish_steps(low.steps, {v.buf.id for v in outs}))))
    mem = memory.plan(steps)
    in_avals = [jaxpr.invars[i].aval for i in input_of]
    don: dict = {}
    aliased = {a.buf.index for a in alias if a is not None and a.buf.kind == "input"}
    for n, i in enumerate(input_of):
        if i in set(donated) and n not in aliased and (in_strides is None or
                                                       in_strides[n] is None):
            a = jaxpr.invars[i].aval
            don.setdefault((a.shape, np.dtype(a.dtype)), []).append(n)
    donate = memory.donations(steps, outs, don, [a is not None for a in alias]) if don \
        else [-1] * len(outs)
    const_index: dict[int, int] = {}
    const_vals: list[np.ndarray] = []

    def ref(v: View) -> tuple:
        b, off, loops = v.buf.root()
        off += v.offset
        if b.kind == "arena":
            r = (_KIND["arena"], 0, b.offset + off)
        elif b.kind == "const":
            if b.id not in const_index:
                const_index[b.id] = len(const_vals)
                const_vals.append(b.value)
            r = (_KIND["const"], const_index[b.id], off)
        else:
            r = (_KIND[b.kind], b.index, off)
        return r + (loops,) if loops else r

    emitter = _Emitter(ref)
    thunks = tuple(emitter.step(s) for s in steps)
    work = sum(_work(s) for s in steps)
    out_avals = [v.aval for v in jaxpr.outvars]
    out_specs = tuple((np.dtype(a.dtype), tuple(a.shape), donate[k],
                       None if alias[k] is None else (ref(alias[k]), alias[k].strides))
                      for k, a in enumerate(out_avals))
    program = kernels.Program(
        name, int(mem["arena_bytes"]),
        tuple((np.dtype(a.dtype), tuple(a.shape),
               None if in_strides is None or in_strides[n] is None else tuple(in_strides[n]),
               max(low.inputs[n].buf.align, np.dtype(a.dtype).alignment))
              for n, a in enumerate(in_avals)),
        out_specs, tuple(const_vals), thunks, work >= NOGIL_MIN, strict,
        config.jit_flush_denormals if flush_denormals is None else flush_denormals)
    return CompiledProgram(name, program, steps, mem, in_avals, out_avals, low.fallbacks, donate,
                           alias)


def finish_steps(steps: list[Step], kept: set[int]) -> list[Step]:
    """Fusion over ``steps`` (``kept``: buffers that must reach memory), then over each nested
    block on its own, whose tail of copies is appended after."""
    steps = fusion.fuse(steps, kept)
    steps = fusion.fuse_epilogues(steps)
    for s in steps:
        for b in control.blocks_of(s):
            layout.orient_products(b.steps, b.kept)
            b.steps = control.elide_tail_copies(
                finish_steps(b.steps, {v.buf.id for v in b.kept}) + b.tail)
            b.kept, b.tail = [], []
    return steps


def _work(s: Step) -> int:
    if isinstance(s, KernelStep):
        return s.work()
    if s.kind in ("par", "pipe"):
        return sum(_work(x) for x in _parts(s))
    if s.kind == "scan":
        return s.info["length"] * sum(_work(x) for x in s.info["blocks"][0].steps)
    if s.kind == "while":
        return NOGIL_MIN  # runs an unknown number of times: worth releasing the GIL
    if s.kind == "cond":
        return max(sum(_work(x) for x in b.steps) for b in s.info["blocks"])
    if s.kind == "dot":
        bt, m, n, k = s.info["dims"]
        return bt * m * n * max(k, 1)
    if s.kind in ("region", "ewise"):
        return math.prod(s.info["shape"]) * len(s.info.get("members", [s]))
    if s.kind == "reduce":
        return s.ins[0].size
    return 0


class _Emitter:
    """Specs of planned steps (steps.Emitter), their operands referenced by ``ref``."""

    def __init__(self, ref):
        self.ref = ref

    def step(self, s: Step, streamed: frozenset = frozenset()) -> Spec:
        if isinstance(s, KernelStep):  # a typed step emits itself
            return s.emit(self)
        return SPECS[s.kind](s, self, streamed)
