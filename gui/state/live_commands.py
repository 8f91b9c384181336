"""What the worker thread does for a translation request and for each live command (no Qt here).

A request starts one of three things: a live greedy/beam :class:`LiveDecoder` at step 0 (nothing
decoded yet: "what comes next?"), a complete teacher-forced result, or a complete padded batch of
two sentences. Commands then move the live decoder: ``step``, ``back``, ``seek k``,
``force (k, word or candidate id)``, ``unfork``, ``path (ids, finished)``.
"""

from __future__ import annotations

from core.checkpoints.checkpoint import Checkpoint
from core.decoding.batch import translate_batch
from core.decoding.live import LiveDecoder, LiveState, complete_state
from core.decoding.strategy import as_strategy
from core.decoding.translate import translate
from core.errors import InputError

COMMANDS = ("step", "back", "seek", "force_word", "force_id", "unfork", "path")


def start(ckpt: Checkpoint, req, should_stop=None) -> tuple[LiveDecoder | None, LiveState]:
    """Begin request ``req`` (a :class:`gui.workers.model_worker.TranslateRequest`): returns the live decoder
    (None for complete results) and the first state to show.

    Raises:
        InputError: bad input, as :func:`core.decoding.translate.translate`.
    """
    batch_with = (getattr(req, "batch_with", None) or "").strip()
    if batch_with:
        if req.reference or not req.strategy.is_greedy or req.pad_to:
            raise InputError(
                "batch with …: runs greedy decoding of two plain sentences (clear the reference, beam or sampling, and pad-to)"
            )
        results = translate_batch(ckpt, [req.text, batch_with], top_k=req.top_k, should_stop=should_stop)
        return None, complete_state(results[0], results)
    if req.reference:
        r = translate(
            ckpt,
            req.text,
            pad_to=req.pad_to,
            reference=req.reference,
            top_k=req.top_k,
            should_stop=should_stop,
            causal=getattr(req, "causal", True),
        )
        return None, complete_state(r)
    strategy = as_strategy(req.strategy)  # checked against the user-input range
    live = LiveDecoder(
        ckpt,
        req.text,
        beam=strategy,
        pad_to=req.pad_to,
        top_k=req.top_k,
        should_stop=should_stop,
        show_full=getattr(req, "show_full", False),
    )
    return live, live.state()


def run_command(live: LiveDecoder | None, name: str, arg, should_stop=None) -> LiveState:
    """Apply one command to ``live`` and return the new state.

    ``step``/``back``: exactly one decoder step / ``DecodeSession.back()`` (``back`` first returns
    to the fork point when the view is past one); ``seek`` k: run or rewind to step k;
    ``force_word`` (k, text): force the tokens of an English word at step k; ``force_id``
    (k, id): force one candidate; ``unfork``; ``path`` (ids, finished): step through a beam
    hypothesis.

    Raises:
        InputError: no live decoder (teacher forcing or a batch), or a bad argument.
    """
    if live is None:
        raise InputError("this view is not live (teacher forcing or a batch): translate a sentence first")
    if name == "step":
        live.step()
    elif name == "back":
        if not live.back_to_fork():
            live.back()
    elif name == "seek":
        live.seek(int(arg), should_stop)
    elif name == "force_word":
        k, text = arg
        ids = live.session.tgt_tok.encode(text).ids
        live.fork(int(k), ids, should_stop)
    elif name == "force_id":
        k, tid = arg
        live.fork(int(k), [int(tid)], should_stop)
    elif name == "unfork":
        live.unfork()
    elif name == "path":
        ids, finished = arg
        live.choose_path(list(ids), bool(finished))
    else:
        raise InputError(f"unknown command {name!r}; one of {', '.join(COMMANDS)}")
    return live.state()
