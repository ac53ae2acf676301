"""Transformations: each interprets or rewrites Jaxprs (jit and staging here; jvp, vjp, vmap,
control flow and checkpointing as they land)."""
