"""The learning-rate schedule: the paper's warm-up and inverse square root, with an optional
linear cool-down to zero at the end of a run."""

from __future__ import annotations


def noam_lr(step: int, d_model: int, warmup: int, scale: float) -> float:
    """lrate = scale · d_model^-0.5 · min(step^-0.5, step · warmup^-1.5) (paper §5.3, Eq. 3)."""
    step = max(step, 1)
    return scale * d_model**-0.5 * min(step**-0.5, step * warmup**-1.5)


def learning_rate(step: int, d_model: int, warmup: int, scale: float, max_steps: int, cooldown: int = 0) -> float:
    """The rate for update ``step`` (1-based): :func:`noam_lr`, multiplied over the last ``cooldown``
    updates before ``max_steps`` by a factor falling linearly from 1 to 0, so the final update
    (``step == max_steps``) has rate 0.

    A cool-down to zero is the usual way to finish a run whose loss has stopped falling at a
    constant or slowly decaying rate (the "warmup-stable-decay" schedule; Hägele et al. 2024,
    "Scaling Laws and Compute-Optimal Training Beyond Fixed Training Durations"): the noise of
    the late updates averages out, much as checkpoint averaging does.

    Raises:
        ValueError: ``cooldown`` is negative.
    """
    if cooldown < 0:
        raise ValueError(f"cooldown must be >= 0 updates, got {cooldown}")
    lr = noam_lr(step, d_model, warmup, scale)
    start = max_steps - cooldown
    if cooldown and step > start:
        lr *= max(0.0, (max_steps - step) / cooldown)
    return lr
