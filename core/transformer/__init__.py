"""The model of "Attention Is All You Need", in the paper's reading order:
``config`` (hyper-parameters, Table 3) → ``masks`` (True = masked) → ``attention`` (§3.2, Eq. 1)
→ ``layers`` (§3.1, §3.3, §3.5) → ``model`` (Figure 1). Imports only torch."""
