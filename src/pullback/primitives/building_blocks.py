"""The primitives every family's rules are built from, declared here by name only.

The rule vocabulary (rules.py) and the rules of each family bind a few primitives of other
families: a transpose sums (reduce_sum), a batching rule broadcasts or permutes
(broadcast_in_dim, transpose), a jvp adds, multiplies or selects (add, sub, mul, select_n). Those
families in turn use the rule vocabulary, so the primitives are named here, below all of them,
and each one receives its whole rule set in its own family module (elementwise.py, movement.py,
reductions.py), as every other primitive does.
"""
from ..tracer.core import Primitive

add_p = Primitive("add")
sub_p = Primitive("sub")
mul_p = Primitive("mul")
select_n_p = Primitive("select_n")
broadcast_in_dim_p = Primitive("broadcast_in_dim")
transpose_p = Primitive("transpose")
reduce_sum_p = Primitive("reduce_sum")
