"""``python -m pullback.demo``: train an MLP classifier on the handwritten digits that ship
inside scikit-learn (8x8 images, 10 classes; no download), then print the test accuracy and
the wall time.

The training step is the usual JAX program: a loss, ``value_and_grad``, an optimizer update
(``pullback.optim.adam``, optax's API), all inside one ``jit``.
"""
from __future__ import annotations

import argparse
import sys
import time
from typing import Any

import numpy as np

try:  # optional (the ``demo`` extra): the progress bar; checked when the demo trains verbosely
    from tqdm import tqdm
except ImportError:  # pragma: no cover - depends on the environment
    tqdm = None

import pullback as pb
import pullback.numpy as jnp
import pullback.optim as optim
from pullback import nn, random


def load_digits(seed: int = 0, test_fraction: float = 0.2):
    """(x_train, y_train, x_test, y_test) as float32 in [0, 1] and int32 labels, stratified."""
    try:
        from sklearn.datasets import load_digits as sk_load_digits
    except ImportError:
        sys.exit("the demo needs scikit-learn for its bundled digits data set: "
                 "pip install 'pullback[demo]'")
    data = sk_load_digits()
    x = (data.data / 16.0).astype(np.float32)
    y = data.target.astype(np.int32)
    rng = np.random.default_rng(seed)
    test = np.zeros(len(y), bool)
    for c in range(10):  # the same fraction of every class in the test set
        idx = rng.permutation(np.flatnonzero(y == c))
        test[idx[:int(round(len(idx) * test_fraction))]] = True
    return x[~test], y[~test], x[test], y[test]


def init_mlp(key: Any, sizes: list[int]) -> list[dict]:
    """He-initialized weights and zero biases for a ReLU MLP."""
    params = []
    keys = random.split(key, len(sizes) - 1)
    init = nn.initializers.he_normal()
    for k, (n_in, n_out) in zip(keys, zip(sizes[:-1], sizes[1:])):
        params.append({"w": init(k, (n_in, n_out)), "b": jnp.zeros(n_out)})
    return params


def predict(params: list[dict], x: Any) -> Any:
    """Logits of the MLP."""
    for layer in params[:-1]:
        x = nn.relu(x @ layer["w"] + layer["b"])
    return x @ params[-1]["w"] + params[-1]["b"]


def loss_fn(params: list[dict], x: Any, y: Any) -> Any:
    """Mean softmax cross-entropy."""
    logp = nn.log_softmax(predict(params, x))
    return -jnp.mean(jnp.sum(logp * nn.one_hot(y, 10), axis=-1))


def make_step(optimizer: optim.GradientTransformation):
    """One jitted training step with ``optimizer``:
    (params, opt_state, x, y) -> (params, opt_state, loss)."""
    @pb.jit
    def step(params, opt_state, x, y):
        loss, grads = pb.value_and_grad(loss_fn)(params, x, y)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optim.apply_updates(params, updates), opt_state, loss
    return step


def accuracy(params: list[dict], x: Any, y: Any) -> float:
    return float(jnp.mean(jnp.argmax(predict(params, x), axis=-1) == y))


def train(epochs: int = 30, batch: int = 64, lr: float = 3e-3, hidden: int = 128,
          seed: int = 0, verbose: bool = True) -> dict:
    """Train and evaluate; returns the accuracy, the loss curve and the time taken.

    With ``verbose``, a tqdm progress bar (one update per epoch, so it costs nothing next to
    the steps) shows the epoch's loss and test accuracy; the test accuracy and wall time are
    printed at the end.
    """
    if verbose and tqdm is None:
        sys.exit("the demo needs tqdm for its progress bar: pip install 'pullback[demo]'")
    x_tr, y_tr, x_te, y_te = load_digits(seed)
    params = init_mlp(random.PRNGKey(seed), [64, hidden, hidden, 10])
    optimizer = optim.adam(lr)
    opt_state = optimizer.init(params)
    step = make_step(optimizer)
    rng = np.random.default_rng(seed)
    xs, ys = jnp.asarray(x_tr), jnp.asarray(y_tr)
    n = len(y_tr) // batch * batch
    losses, accs = [], []
    t0 = time.perf_counter()
    bar = tqdm(total=epochs, desc="  training", unit="epoch") if verbose else None
    for epoch in range(1, epochs + 1):
        perm = rng.permutation(len(y_tr))[:n].reshape(-1, batch)
        epoch_loss = 0.0
        for idx in perm:
            params, opt_state, loss = step(params, opt_state, xs[idx], ys[idx])
            epoch_loss += float(loss)
        losses.append(epoch_loss / len(perm))
        accs.append(accuracy(params, x_te, y_te))
        if bar is not None:
            bar.set_postfix(loss=f"{losses[-1]:.4f}", test_acc=f"{accs[-1]:.3f}", refresh=False)
            bar.update()
    if bar is not None:
        bar.close()
    seconds = time.perf_counter() - t0
    acc = accuracy(params, x_te, y_te)
    if verbose:
        print(f"  test accuracy {acc * 100:.1f}% ({len(y_te)} images); trained in "
              f"{seconds:.1f} s ({epochs} epochs of {len(perm)} steps)")
    return {"accuracy": acc, "losses": losses, "test_accuracy": accs, "seconds": seconds,
            "params": params}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m pullback.demo", description=__doc__.split("\n")[0])
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--lr", type=float, default=3e-3, help="Adam's learning rate")
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    print(f"pullback {pb.__version__}: MLP 64-{args.hidden}-{args.hidden}-10 on scikit-learn's "
          "digits")
    out = train(args.epochs, args.batch, args.lr, args.hidden, args.seed)
    return 0 if out["accuracy"] >= 0.95 else 1


if __name__ == "__main__":
    raise SystemExit(main())
