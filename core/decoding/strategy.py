"""How an output is chosen: greedy decoding, beam search or sampling, as a named type instead of a bare beam size.

A :class:`DecodingStrategy` is a frozen value (``name``, ``beam_size``). The app, the CLI, the
evaluation and the benchmarks pass it (or a beam size, turned into one by :func:`as_strategy`) and
ask it ``is_greedy`` instead of testing ``beam == 1``.

Decoding always steps a :class:`~core.decoding.session.DecodeSession` on its KV cache; a strategy
only decides whether the steps follow the argmax or a path found ahead of time. :data:`STRATEGIES`
maps each name to its search: ``None`` (greedy: no search, each step takes the argmax) or a function
``search(strategy, model, src_tok, text, *, alpha, should_stop, session, prefix, trace)`` returning
hypotheses, best first, whose best one is then stepped through (beam). Adding a strategy that
searches ahead is one module with such a function plus one line in :data:`STRATEGIES`.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.decoding.beam import BeamStep, Hypothesis, beam_search
from core.defaults import check_beam

GREEDY, BEAM, SAMPLING = "greedy", "beam", "sampling"


def _beam(
    strategy: DecodingStrategy,
    model,
    src_tok,
    text: str,
    *,
    alpha: float = 0.6,
    should_stop=None,
    session=None,
    prefix: list[int] | None = None,
    trace: list[BeamStep] | None = None,
) -> list[Hypothesis]:
    """Beam search of ``strategy.beam_size`` hypotheses (:func:`core.decoding.beam.beam_search`)."""
    return beam_search(
        model,
        src_tok,
        text,
        beam=strategy.beam_size,
        alpha=alpha,
        should_stop=should_stop,
        session=session,
        prefix=prefix,
        trace=trace,
    )


def _sampling(strategy: DecodingStrategy, model, src_tok, text: str, **kw) -> list[Hypothesis]:
    """One output drawn with ``strategy``'s temperature, top-k, top-p and seed
    (:func:`core.decoding.sampling.sample_search`)."""
    from core.decoding.sampling import sample_search

    return sample_search(strategy, model, src_tok, text, **kw)


#: name -> search ahead (None: greedy, the argmax at each step on the session's cache). The names are
#: also :attr:`core.decoding.translate.Translation.mode`.
STRATEGIES = {GREEDY: None, BEAM: _beam, SAMPLING: _sampling}


@dataclass(frozen=True)
class DecodingStrategy:
    """How the output is chosen. ``name``: a key of :data:`STRATEGIES` ("greedy" or "beam");
    ``beam_size``: the number of hypotheses kept per step (a count, unitless): 1 for greedy, at
    least 2 for beam (a beam of 1 is greedy decoding, so it is spelled ``greedy()``: each
    behaviour has one value, and ``from_beam_size(1) == greedy()``).

    The upper bound :data:`core.defaults.MAX_BEAM` is a user-input limit, checked by
    :func:`as_strategy` and the decoders, not here.

    Raises:
        ValueError: an unknown name, a beam size below 1, greedy with a size other than 1, or beam
            with a size below 2.
        TypeError: ``beam_size`` is not an int (a bool is not accepted either).
    """

    name: str = GREEDY
    beam_size: int = 1
    temperature: float = 1.0
    sample_top_k: int = 0
    top_p: float = 1.0
    seed: int = 0

    def __post_init__(self) -> None:
        if self.name == SAMPLING:
            from core.decoding.sampling import check_sampling

            if self.beam_size != 1:
                raise ValueError(f"sampling draws one output, got beam size {self.beam_size}")
            check_sampling(self.temperature, self.sample_top_k, self.top_p)
            if not isinstance(self.seed, int) or isinstance(self.seed, bool):
                raise TypeError(f"seed must be an int, got {type(self.seed).__name__}")
        elif (self.temperature, self.sample_top_k, self.top_p, self.seed) != (1.0, 0, 1.0, 0):
            raise ValueError(f"temperature, top-k, top-p and seed belong to sampling, not {self.name}")
        if self.name not in STRATEGIES:
            raise ValueError(f"unknown decoding strategy {self.name!r}; one of {', '.join(STRATEGIES)}")
        if not isinstance(self.beam_size, int) or isinstance(self.beam_size, bool):
            raise TypeError(f"beam size must be an int, got {type(self.beam_size).__name__}")
        if self.beam_size < 1:
            raise ValueError(f"beam size must be at least 1 (1 = greedy), got {self.beam_size}")
        if self.name == GREEDY and self.beam_size != 1:
            raise ValueError(f"greedy decoding keeps one hypothesis, got beam size {self.beam_size}")
        if self.name == BEAM and self.beam_size < 2:
            raise ValueError("a beam of 1 is greedy decoding: use DecodingStrategy.greedy() or from_beam_size(1)")

    @classmethod
    def greedy(cls) -> DecodingStrategy:
        """The argmax at every step (beam size 1)."""
        return cls(GREEDY, 1)

    @classmethod
    def beam(cls, k: int) -> DecodingStrategy:
        """Beam search keeping ``k >= 2`` hypotheses. Raises ValueError for k < 2 (see the class)."""
        return cls(BEAM, k)

    @classmethod
    def sampling(cls, temperature: float = 1.0, top_k: int = 0, top_p: float = 1.0, seed: int = 0) -> DecodingStrategy:
        """Draw each token from the model's distribution at ``temperature`` (0 = the argmax, as
        greedy), cut to the ``top_k`` most probable (0 = no cut) and to the nucleus of mass
        ``top_p`` (1 = no cut), with a random generator seeded by ``seed`` (same seed, same output).

        Raises:
            ValueError: a setting out of range (:func:`core.decoding.sampling.check_sampling`).
        """
        return cls(SAMPLING, 1, float(temperature), top_k, float(top_p), seed)

    @classmethod
    def from_beam_size(cls, k: int) -> DecodingStrategy:
        """The strategy a beam size stands for: 1 -> greedy, k >= 2 -> beam of k.

        Raises:
            ValueError: k < 1. TypeError: k is not an int.
        """
        if isinstance(k, int) and not isinstance(k, bool) and k >= 2:
            return cls(BEAM, k)
        return cls(GREEDY, k)  # k == 1; any other value raises in __post_init__

    @property
    def is_greedy(self) -> bool:
        return self.name == GREEDY

    @property
    def is_beam(self) -> bool:
        return self.name == BEAM

    @property
    def is_sampling(self) -> bool:
        return self.name == SAMPLING

    @property
    def searches_ahead(self) -> bool:
        """True when the output is a path found by :meth:`search` (beam, sampling), False when
        each step takes the argmax (greedy)."""
        return STRATEGIES[self.name] is not None

    def search(
        self,
        model,
        src_tok,
        text: str,
        *,
        alpha: float = 0.6,
        should_stop=None,
        session=None,
        prefix: list[int] | None = None,
        trace: list[BeamStep] | None = None,
    ) -> list[Hypothesis]:
        """The hypotheses to step through, best first ([] when :attr:`searches_ahead` is False).

        ``alpha``: GNMT length-penalty exponent; ``session``: reuse its encoder output; ``prefix``:
        output ids every hypothesis starts with; ``trace``: receives the search, step by step
        (see :func:`core.decoding.beam.beam_search`, whose errors it raises).
        """
        fn = STRATEGIES[self.name]
        if fn is None:
            return []
        return fn(self, model, src_tok, text, alpha=alpha, should_stop=should_stop, session=session, prefix=prefix, trace=trace)

    def __str__(self) -> str:
        """``greedy``, ``beam 4`` or ``sampling T=0.8 top-k 40 top-p 0.9 seed 1``."""
        if self.is_sampling:
            return (
                f"sampling T={self.temperature:g}"
                + (f" top-k {self.sample_top_k}" if self.sample_top_k else "")
                + (f" top-p {self.top_p:g}" if self.top_p < 1 else "")
                + f" seed {self.seed}"
            )
        return self.name if self.is_greedy else f"{self.name} {self.beam_size}"


def as_strategy(beam: int | DecodingStrategy) -> DecodingStrategy:
    """``beam`` (a beam size, 1 = greedy, or a :class:`DecodingStrategy`) as a strategy, checked
    against the user-input range ``MIN_BEAM..MAX_BEAM`` of :mod:`core.defaults`.

    Raises:
        InputError: the beam size is out of range or not an int (the one-line error the CLI and
            the app report).
    """
    if isinstance(beam, DecodingStrategy):
        check_beam(beam.beam_size)
        return beam
    return DecodingStrategy.from_beam_size(check_beam(beam))


__all__ = ["DecodingStrategy", "STRATEGIES", "GREEDY", "BEAM", "SAMPLING", "as_strategy"]
