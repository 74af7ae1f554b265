"""Is one head enough? Fit the best single head to every layer of a real model
(docs/one-head.md).

For each layer l, its real input X and attention output Y = MHA_l(X) (after the output
projection, before the residual and LayerNorm), and on held-out sentences
R² = 1 - ||Y - Ŷ||² / ||Y - mean(Y)||² of:
  (a) the summed head: the layer's own weights read as one head (measure.summed_head_output);
  (b) the best original head alone, and the best k original heads chosen greedily;
  (c) the best-fit single head: one head of width D started from (a) and trained (fit.py);
  (d) fitted layers of h heads of width D/h (same parameters, budget and start rule), and
      h = H from a fresh start;
with the downstream cost of (c) and the Michel et al. (2019) check on the whole model (run.py).

    python -m mha_core.one_head mha_core/data/headscope-sample.conllu --json out.json
"""

from .cli import measure, sentence
from .data import read_corpus
from .fit import FitConfig
from .run import Settings

__all__ = ["measure", "sentence", "read_corpus", "FitConfig", "Settings"]
