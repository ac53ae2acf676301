"""``python -m pullback.demo``: a tqdm progress bar per epoch, the test accuracy and wall time
printed at the end, and a clear message when tqdm is missing."""
import pytest

pytest.importorskip("sklearn")
pytest.importorskip("tqdm")

from pullback import demo  # noqa: E402


def test_demo_prints_accuracy_time_and_a_tqdm_bar(capsys):
    out = demo.train(epochs=3, hidden=32, verbose=True)
    captured = capsys.readouterr()
    assert f"test accuracy {out['accuracy'] * 100:.1f}%" in captured.out
    assert "trained in" in captured.out and "(3 epochs of" in captured.out
    # tqdm draws on stderr: the bar reached 3/3 epochs and shows the last epoch's loss
    assert "3/3" in captured.err and f"loss={out['losses'][-1]:.4f}" in captured.err
    assert len(out["losses"]) == len(out["test_accuracy"]) == 3


def test_demo_quiet_draws_nothing(capsys):
    demo.train(epochs=1, hidden=16, verbose=False)
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""


def test_demo_without_tqdm_names_the_extra(monkeypatch):
    monkeypatch.setattr(demo, "tqdm", None)  # as if `from tqdm import tqdm` had failed
    with pytest.raises(SystemExit, match=r"tqdm.*pullback\[demo\]"):
        demo.train(epochs=1, verbose=True)
    # training without a progress bar needs no tqdm
    assert demo.train(epochs=2, hidden=32, verbose=False)["accuracy"] > 0.5
