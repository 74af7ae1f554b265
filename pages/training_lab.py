"""Training lab: tiny attention models trained live on the CPU, to see why heads end up
different and whether many small heads beat one big one."""

from dataclasses import replace

import numpy as np
import pandas as pd
import streamlit as st

from headscope.ui import figures, models, one_head_results
from headscope.ui.page import Page
from headscope.ui.presentation import plot, presenting
from headscope.ui.words import plural
from mha_core import toy

PAGE = Page("tl", keep=("tl_small_steps", "tl_seed", "tl_heads"))
PAGE.start()

SMALL_STEPS = 30  # the "small steps" setting: a quick look, and what the app tests use
# Experiment 2 (symmetry) needs no more: identical heads stay exactly identical at every step,
# and random or dropout-broken heads are apart by step 60. Its three runs of 180 steps take
# about 10 s on an idle core (docs/teaching.md)
SYMMETRY_STEPS = 180


class NotCached(Exception):
    pass


@st.cache_data(**models.bounded(), show_spinner=False)
def stored(cfg: toy.LabConfig, _result=None):
    """The cache of finished runs, per settings and seed. Called with only cfg it answers from
    the cache or raises NotCached (exceptions are not cached); called with _result (not
    hashed) it stores that result."""
    if _result is None:
        raise NotCached
    return _result


def cached_run(cfg):
    try:
        return stored(cfg)
    except NotCached:
        return None


def run_experiment(key: str, runs: dict, ytitle="training loss") -> dict | None:
    """runs: {label: LabConfig}. Shows the cached results if every run is cached; otherwise
    waits for the Train button, then trains the missing runs one by one with a progress bar and
    a loss curve that updates while training. Returns {label: RunResult} or None."""
    results = {label: cached_run(cfg) for label, cfg in runs.items()}
    missing = [label for label, r in results.items() if r is None]
    if not missing:
        st.caption("Cached result for these settings and seed.")
        return results
    steps = sum(runs[label].steps for label in missing)
    if not st.button(f"Train ({plural(len(missing), 'run')}, {plural(steps, 'step')})",
                     key=f"tl_train_{key}", type="primary"):
        return None
    bar = st.progress(0.0, text="Starting…")
    chart = st.empty()
    done = {lbl: (r.steps, r.loss) for lbl, r in results.items() if r is not None}
    for i, lbl in enumerate(missing):
        cfg = runs[lbl]

        def on_step(step, steps, snaps, i=i, lbl=lbl):
            frac = (i + step / steps) / len(missing)
            bar.progress(min(frac, 1.0), text=f"{lbl}: step {step} of {steps}")
            live = figures.curves_figure({**done, lbl: (snaps["steps"], snaps["loss"])},
                                         "live: loss while training", ytitle)
            plot(chart, live, width="stretch", key=f"tl_live_{key}_{i}_{step}")

        result = toy.train(cfg, on_step)
        results[lbl] = stored(cfg, _result=result)
        done[lbl] = (result.steps, result.loss)
    bar.empty()
    chart.empty()
    return results


def seq_labels(digits, marked) -> list:
    return [f"{int(d)}*" if m else str(int(d)) for d, m in zip(digits, marked)]


def example_table(r: toy.RunResult) -> pd.DataFrame:
    T = len(r.example_digits)
    rows = {"position": list(range(T)),
            "input": seq_labels(r.example_digits, r.example_marked),
            "PREV (answer)": ["–"] + [str(int(t)) for t in r.example_target[1:, 0]],
            "MARKED (answer)": ["–"] + [str(int(t)) for t in r.example_target[1:, 1]],
            "model says": ["–"] + [f"{int(p[0])}, {int(p[1])}" for p in r.example_pred[1:]]}
    return pd.DataFrame(rows).set_index("position").T


PAGE.heading("Training lab",
             "Small attention models trained live on this CPU. Why doesn't every head learn the "
             "same thing? Is one big head as good as many small ones?")

c1, c2, c3 = st.columns(3)
small = c1.toggle(f"Small steps ({SMALL_STEPS} steps: a quick look, not a result)",
                  key="tl_small_steps")
seed = int(c2.number_input("Seed", 0, 999, key="tl_seed"))  # starts at 0
heads = c3.selectbox("Heads h (experiments 1 and 3)", [2, 4], key="tl_heads")
base = toy.LabConfig(seed=seed, n_heads=heads)
if small:
    base = replace(base, steps=SMALL_STEPS, eval_every=5)

with st.expander("The task", expanded=not presenting()):  # closed on a projector: Train fits
    st.markdown(f"""
A sequence of **{base.seq_len} digits** (0–{base.n_digits - 1}); exactly one of them is
**marked** (shown as `5*`). At every position after the first, the model must answer two
digits at once:
- **PREV**: the digit just before this position: a relation by *position* (always offset −1);
- **MARKED**: the marked digit: a relation by *content* (the mark is somewhere different in
  every sequence).

The model is one attention layer and nothing else: embeddings (digit + mark + position),
x + attention(x), then two linear readouts (Elhage et al. 2021 call this a one-layer
attention-only transformer). d_model = {base.d_model}; one head has d_k = {base.d_model}, h
heads have d_k = {base.d_model}/h each, so every model has the same width. Training: Adam,
lr {base.lr}, batches of {base.batch} fresh random sequences, {base.steps} steps
(a run takes a few seconds; more when the CPU is busy). Accuracy = both answers right on the
same {base.eval_size} held-out sequences.

Why this should need two heads: a head's output is one weighted average of the positions it
attends to. Two heads can each look at one place. One head must split a single softmax between
the previous position and the marked one, and two linear readouts must then pull two
different digits out of the same mixture.
""")
    digits, marked, targets = toy.example(base)
    st.dataframe(pd.DataFrame({
        "input": seq_labels(digits, marked),
        "PREV": ["–"] + [str(int(t)) for t in targets[1:, 0]],
        "MARKED": ["–"] + [str(int(t)) for t in targets[1:, 1]]}).T,
        width="stretch")

# --- experiment 1: the headline ---------------------------------------------------------------
st.subheader(f"Experiment 1 · 1 head vs {heads} heads at the same d_model")
st.write(f"A **trained one-head model** (one head of d_k = {base.d_model}, trained for this "
         f"task) against {heads} heads of d_k = {base.d_model // heads}: same seed, same data, "
         "same parameter count. (Not the Explorer's summed head, which is a real layer's "
         "weights read as one head and never trained as one.)")
runs2 = {"1 head": replace(base, n_heads=1), f"{heads} heads": base}
res2 = run_experiment("heads", runs2)
if res2 is None:
    st.info("Press Train to run this experiment (or turn on small steps for a quick look).")
else:
    c1, c2 = st.columns(2)
    plot(c1, figures.curves_figure({k: (r.steps, r.loss) for k, r in res2.items()},
                                   "training loss", "cross-entropy"),
             width="stretch", key="tl_exp2_loss")
    plot(c2, figures.curves_figure({k: (r.steps, r.accuracy) for k, r in res2.items()},
                                   "held-out accuracy (both answers)", "accuracy",
                                   yrange=[0, 1.02]),
             width="stretch", key="tl_exp2_acc")
    st.dataframe(pd.DataFrame([{
        "model": k, "accuracy (both)": f"{r.final_accuracy:.3f}",
        "PREV right": f"{r.accuracy_prev[-1]:.3f}", "MARKED right": f"{r.accuracy_marked[-1]:.3f}",
        "parameters": r.params, "seconds": f"{r.seconds:.1f}"} for k, r in res2.items()]),
        hide_index=True, width="stretch")
    st.markdown("**The trained attention maps on one held-out sequence** (rows = the position "
                "that asks, columns = where it looks):")
    for k, r in res2.items():
        labels = seq_labels(r.example_digits, r.example_marked)
        plot(st, figures.lab_maps_figure(r.example_maps, labels,
                                         [f"{k}: head {i + 1}"
                                          for i in range(len(r.example_maps))]),
                 width="stretch", key=f"tl_exp2_maps_{k}")
        st.dataframe(example_table(r), width="stretch")
    st.markdown("""
Typically one of the heads becomes a **diagonal** (previous-token) head and the other a
**vertical** stripe on the marked digit: the two patterns Kovaleva et al. (2019) and Clark et
al. (2019) find in BERT. The trained one-head model has to mix both in one map.

**Is it one lucky seed?** Change the seed above and train again. Both models were trained on
8 seeds (`bench/lab_seeds.py`): at 600 steps, 2 heads reached at least 0.999 accuracy on every seed
and 4 heads 1.000; one head reached 0.26 to 0.80, so the margin was at least +0.20 on every
seed (mean +0.43). One head is not incapable: trained for 2000 steps it reached 0.99 on the 3 seeds
tried. So what the lab measures is how fast the task is learned at a fixed budget: with two
heads, each relation gets its own softmax, and the task is solved in a few hundred steps.
""")
    r = res2[f"{heads} heads"]
    plot(st, figures.curves_figure({f"{heads} heads": (r.steps, r.diversity)},
                                   "head diversity over training",
                                   "mean pairwise map distance", yrange=[0, 1]),
             width="stretch", key="tl_exp2_div")

st.subheader("On the real model: is one head enough?")  # headscope/ui/one_head_results.py
one_head_results.section(models.BUNDLED, key="tl_one_head")

# --- experiment 2: symmetry --------------------------------------------------------------------
st.subheader("Experiment 2 · Why don't the heads learn the same thing? (symmetry)")
sym_heads = 4
sym = replace(base, n_heads=sym_heads, steps=min(base.steps, SYMMETRY_STEPS),
              eval_every=min(base.eval_every, 20))
st.write(f"{sym_heads} heads (whatever h above says), three starts: random initialisation; "
         "every head an identical copy of head 1 (the same rows of W_Q, W_K, W_V and the same "
         "columns of W_O); and the identical copies trained with dropout 0.1 on the attention "
         f"weights. {sym.steps} steps each: about 10 s on an idle CPU core, longer when the "
         "server is busy; the bar shows the progress.")
runs1 = {"random init": sym, "identical init": replace(sym, init="identical"),
         "identical + attention dropout": replace(sym, init="identical", attn_dropout=0.1)}
res1 = run_experiment("symmetry", runs1)
if res1 is None:
    st.info("Press Train to run this experiment.")
else:
    c1, c2 = st.columns(2)
    plot(c1, figures.curves_figure({k: (r.steps, r.max_head_gap) for k, r in res1.items()},
                                   "largest weight difference between two heads",
                                   "max |w_i − w_j|"),
             width="stretch", key="tl_exp1_gap")
    plot(c2, figures.curves_figure({k: (r.steps, r.diversity) for k, r in res1.items()},
                                   "head diversity over training",
                                   "mean pairwise map distance", yrange=[0, 1]),
             width="stretch", key="tl_exp1_div")
    any_run = next(iter(res1.values()))
    snap_steps = [int(s) for s in any_run.steps]
    at = st.select_slider("Similarity matrices at step", snap_steps, value=snap_steps[-1],
                          key="tl_sym_step")
    idx = snap_steps.index(at)
    cols = st.columns(3)
    for col, (k, r) in zip(cols, res1.items()):
        col.markdown(f"**{k}** (accuracy {r.final_accuracy:.2f} at the end)")
        plot(col, figures.similarity_figure(1 - r.map_distance[idx],
                                            "attention maps: 1 − distance"),
                  width="stretch", key=f"tl_exp1_maps_{k}")
        plot(col, figures.similarity_figure(r.weight_similarity[idx],
                                            "weights: cosine similarity", zmin=-1),
                  width="stretch", key=f"tl_exp1_w_{k}")
    ident = res1["identical init"]
    st.markdown(f"""
**Identical heads stay identical.** If every head starts with the same weights, every head
computes the same map and output, so every head receives the same gradient and the same Adam
update, step after step. Here the largest difference between two heads' weights after
{int(ident.steps[-1])} steps is **{ident.max_head_gap[-1]:.1e}**. Four identical heads are
one head used four times: accuracy {ident.final_accuracy:.2f}.

This needs deterministic arithmetic: the heads' numbers go through the same operations in the
same order, so they round the same way and stay bit for bit equal. (A kernel that summed some
heads in a different order could leave a 10⁻⁷ difference that training might then amplify.)

**What breaks the symmetry.** Random initialisation (heads start in different places, so
they get different gradients and drift apart), or anything that treats heads differently
during training: here attention dropout, which drops a different random set of weights in
every head, so the copies receive different gradients and slowly diverge.
""")

# --- experiment 3: wide vs narrow vs random ----------------------------------------------------
st.subheader(f"Experiment 3 · Wide vs narrow vs random slices ({heads} heads, "
             f"d_model {base.d_model})")
st.write("Wide: every head reads the whole input vector. Narrow: each head reads only its own "
         "slice. Random: each head reads its own random (possibly overlapping) dims. See "
         "*Inside MHA → Narrow vs wide* for the diagrams.")
runs3 = {mode: replace(base, mode=mode) for mode in ("wide", "narrow", "random")}
res3 = run_experiment("modes", runs3)
if res3 is None:
    st.info("Press Train to run this experiment.")
else:
    plot(st, figures.curves_figure({k: (r.steps, r.accuracy) for k, r in res3.items()},
                                   "held-out accuracy", "accuracy", yrange=[0, 1.02]),
             width="stretch", key="tl_exp3_acc")
    st.dataframe(pd.DataFrame([{
        "mode": k, "accuracy": f"{r.final_accuracy:.3f}",
        "attention parameters": r.attn_params, "model parameters": r.params,
        "seconds": f"{r.seconds:.1f}",
        "final diversity": f"{r.diversity[-1]:.2f}"} for k, r in res3.items()]),
        hide_index=True, width="stretch")
    st.caption("The narrow modes have h× fewer Q/K/V parameters. The embeddings are trained "
               "too, so they can learn to put what each head needs into its slice, and usually "
               "do: in the seed sweep (2 heads, 600 steps, 5 seeds) wide and random reached "
               "0.99 to 1.00 on every seed, narrow did on 3 seeds and was still at 0.24 and "
               "0.51 on the other two. Seconds are wall-clock on a shared CPU. Mean final "
               f"accuracy here: {np.mean([r.final_accuracy for r in res3.values()]):.2f}.")
