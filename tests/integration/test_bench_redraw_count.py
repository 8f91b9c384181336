"""The instruction-count benchmark reads callgrind's totals and says why when valgrind is missing."""

from __future__ import annotations

import bench.redraw_count as rc


def test_without_valgrind_it_exits_2_with_the_reason(monkeypatch, capsys):
    monkeypatch.setattr(rc.shutil, "which", lambda name: None)
    assert rc.main(["--kinds", "decoder"]) == 2
    assert "valgrind" in capsys.readouterr().out


def test_count_divides_callgrinds_totals_by_the_steps(monkeypatch, tmp_path):
    def fake_run(cmd, **kwargs):
        out = next(a.split("=", 1)[1] for a in cmd if a.startswith("--callgrind-out-file="))
        with open(out, "w") as f:
            f.write("events: Ir\nsummary: 0\ntotals: 1234000000\n")

    monkeypatch.setattr(rc.subprocess, "run", fake_run)
    assert rc.count("decoder", 20) == 61.7
