"""What the attention did: ``maps`` (the maps and masks of one sentence), ``head_stats`` (mean over
heads, rollout, per-head summaries), ``ablation`` and ``compare`` (interventions), ``inside`` (the
inside of one attention step)."""
