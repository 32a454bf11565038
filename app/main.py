"""dpviz: explore differentially private clustering (FriendlyCore) live in the browser.

Run with ``make run`` or ``streamlit run app/main.py`` (from anywhere: the repo root is put on
``sys.path`` below). Pages (``st.navigation``; URL paths in brackets):

Page scripts live in ``app/views/`` (not ``app/pages/``: a ``pages/`` folder next to the
entry point switches Streamlit to the legacy multipage mode, which runs a page without this
script).

- Explore [/ only; the default page has no path of its own]: one private run of any registered
  algorithm (FriendlyCore by default, Figure 3 style).
- Data [/data]: generate, pick a built-in dataset, or upload a CSV (and declare Λ).
- Budget [/budget]: accuracy and success rate against the row-level ε, loss against n.
- Compare [/compare]: every registered algorithm at the same row-level (ε, δ), side by side.
- Learn [/learn]: DP, zCDP, FriendlyCore, sample-and-aggregate; what to try.
- Release [/release]: one deliberate private release (secure sampler, session ledger, seedless
  JSON export); every other page is a seeded *simulation* and says so.
- Mixtures [/mixtures]: private Gaussian-mixture learning in 1-D, a 2-D demo, the theory panel.
- Generate [/generate]: per-cluster generative models trained with DP-SGD (Acs et al.), in the
  background with progress and cancel; synthetic samples and their guarantee.

All parameters and the seed are in the URL query string (see ``app/components/state.py``):
data src, gen, n, d, gk, sep, dseed, builtin; run alg, eps, delta (the row-level target every
algorithm is planned from), k, radius (``auto`` = the dataset's declared Λ), seed, and the
algorithm's own parameters as ``<algorithm>.<field>`` (FriendlyCore's t (0 = automatic), oracle,
preset, r_min, fallback also as the flat t, oracle, preset, rmin, fb of older links); sweep balg
(registry names, with parameters in brackets: ``friendlycore[preset=paper]``), blo, bhi, bpts,
breps; compare calg, celo, cehi, cpts, cdelta, creps; present pa, pb. A link made with the old ρ
slider (``rho=``) is read once (``state.LINK_RHO``); the app never writes a ρ. A link opened later
(or another session) shows the same view; uploaded data is never in the link.

Session keys (the app's state between reruns, and every widget key below) are declared once, with
the type of each value, by the module that uses them (a block "Session keys this module owns" at
its top); the few that more than one module uses are in ``app/components/keys.py``.

Stable widget keys (locate in the browser as ``.st-key-<key>``)
---------------------------------------------------------------
Every page
    ``dataset_summary`` (sidebar container: the current dataset in one line).
Explore
    Live (a fragment: a change reruns only the private stage): ``eps_slider`` (select_slider: the
    row-level ε, every algorithm's main control; its thumb is ``input[type=range]``),
    ``delta_select`` (select_slider, powers of ten), ``own_budget_readout`` (container: the
    algorithm's own budget from its plan, e.g. FriendlyCore's ρ), ``rho_link_note`` (container: an
    old ρ link's budget and its row-level (ε, δ)), ``fallback_toggle`` (FriendlyCore's backup
    method on/off), ``ex_algorithm`` (the algorithm picker), ``rho_entry`` (number_input in an
    expander: a zCDP ρ typed with δ, converted once into the row-level target; its sentence in
    ``rho_entry_note``),
    ``eps_readout`` (container: the metric "Privacy per row of your data" = row-level ε and δ, the
    strength in words, the odds sentence, the paper's per-tuple ε as a caption).
    Sidebar form ``explore_form``: ``ex_dataset``, ``ex_n``, ``ex_k``, ``ex_t``, ``ex_oracle``,
    ``ex_radius``, ``ex_rmin``, ``ex_preset``, ``ex_seed``, ``ex_apply`` (submit; ``ex_t``,
    ``ex_oracle``, ``ex_rmin``, ``ex_preset`` are FriendlyCore's, from its folder's ``form.py``;
    another algorithm's generated form has ``alg_apply``); an out-of-range
    value's message sits under its field in ``<key>_msg`` (e.g. ex_t_msg); ``auto_changes``
    (container: t, k or r_min changed automatically, with the reason).
    Output: ``run_status`` (success / fallback / failure), ``explore_error`` (parameter errors,
    shown while the previous result stays), ``metrics_tiles`` (tuples kept, normalized loss,
    center error, centers released), ``explore_view`` (view picker: Storyboard, Privacy,
    Re-draw noise, Filters & radii, Downloads; only the shown view is computed), ``storyboard``
    (container) with
    the toggle ``step_mode`` (step through: ``step_prev``, ``step_next``, ``step_narration``,
    chart ``storyboard_step``, one panel at a time) or
    charts ``storyboard_<panel>`` (panels (a) and (b)), ``storyboard_live`` (panels (c)-(g) in one figure;
    point clouds drawn as images unless the toggle ``storyboard_vector`` asks for WebGL points;
    live charts, app/components/live_chart.py: the graph is ``.dpviz-live-chart``, drawn when
    its ``data-revision`` equals its ``data-pending``);
    ``privacy_statement``, ``feasibility``
    (containers), ``ledger_chart``; a registered exploration (Re-draw noise, Filters & radii):
    its options ``explore_opt_<algorithm>_<option>``, its button ``explore_compute_<algorithm>``,
    its charts ``alg_exploration_<title>`` (then ``_<i>``) in the container ``exploration``;
    ``dl_centers``, ``dl_ledger``, ``dl_config``, ``dl_figure`` (download buttons).
Data
    ``source_radio`` (generate | builtin | upload); ``gen_select`` (live), form ``gen_form`` with
    ``gen_n``, ``gen_d``, ``gen_k``, ``gen_sep``, ``gen_seed``, ``gen_apply``;
    ``regenerate_button``; ``builtin_select``; ``csv_upload`` (file_uploader), ``csv_error``
    (container: unreadable file / no columns), ``csv_columns`` (multiselect), ``csv_messages``
    (container: dropped-row count, row cap, success), ``csv_use_data_radius`` (checkbox, NOT
    private), ``csv_radius`` (number_input: the declared Λ), ``csv_use`` (button);
    ``data_facts`` (container: name, n, d, Λ), ``data_error``, ``data_preview`` (chart).
Budget
    ``budget_algorithms`` (multiselect), ``budget_eps_range`` (range select_slider, row-level ε),
    ``budget_points``, ``budget_reps`` (number inputs), ``budget_run``, ``budget_stop``
    (buttons), ``budget_progress`` (container with the progress bar), ``budget_origin`` (caption:
    the curves were precomputed or shared by another session), ``budget_accuracy``
    (chart; clicking a median point opens Explore at that row-level ε), ``budget_success`` (chart),
    ``budget_loss_n_run`` (button), ``budget_loss_n`` (chart).
Compare
    ``compare_guarantee`` (container: the same-row-level-guarantee statement),
    ``compare_algorithms`` (multiselect, from ``dpviz.algorithms()``), ``compare_eps_range``,
    ``compare_points``, ``compare_reps`` (as on Budget), ``compare_delta`` (select_slider),
    ``cmp_<algorithm>_<parameter>`` (each algorithm's parameter form, generated from its hints, in
    an expander with its paper and guarantee), ``compare_run``, ``compare_stop`` (buttons),
    ``compare_progress``, charts ``compare_loss`` (a click opens that
    algorithm at that row-level ε in Explore), ``compare_structure``, ``compare_seconds``;
    ``compare_table`` (dataframe).
Learn
    ``learn_mia`` (container: the membership game; ``learn_mia_eps``, ``mi_guess_in``,
    ``mi_guess_out``, ``mi_result``, ``mi_again``),
    ``learn_rho``, ``learn_demo_rho`` (select_sliders), ``learn_eps_table`` (container),
    ``learn_storyboard_chart``, ``learn_filter_chart``, ``learn_try`` (links into Explore).
Generate
    Form ``dpgm_form``: ``dpgm_k``, ``dpgm_eps``, ``dpgm_epochs``, ``dpgm_seed``, ``dpgm_train``;
    ``dpgm_cancel`` (button, while training), ``dpgm_simulation`` (badge), ``dpgm_epsilon``
    (container), charts ``dpgm_eps_curve``, ``dpgm_samples``; ``dpgm_download``.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import streamlit as st  # noqa: E402

from app.components import a11y, cache, classroom, data_source, keys, rerun_timing, safe, state  # noqa: E402
from app.components.keys import Key  # noqa: E402

# Session keys this module owns (declared here, issue 45 item 4; keys that more than one module
# uses are in app/components/keys.py).
DATASET_SUMMARY: Key[object] = Key(
    "dataset_summary", object, "sidebar container (every page): the current dataset in one line")

classroom.upload_limit()  # classroom mode refuses every upload, however it was switched on (issue 46)

# A local SVG (sent as a data: URI), not ":material/…:": Streamlit fetches a Material favicon from
# fonts.gstatic.com, and the app makes no request outside its own server (issue 36).
st.set_page_config(page_title="dpviz: private clustering", page_icon=ROOT / "app" / "favicon.svg",
                   layout="wide")

state.init()
cache.start_janitor()  # frees closed sessions' memory (issue 19)

HERE = Path(__file__).resolve().parent
PAGES = {
    "explore": st.Page(HERE / "views/explore.py", title="Explore", icon=":material/insights:",
                       url_path="explore", default=True),
    "data": st.Page(HERE / "views/data.py", title="Data", icon=":material/table_chart:",
                    url_path="data"),
    "budget": st.Page(HERE / "views/budget.py", title="Budget", icon=":material/tune:",
                      url_path="budget"),
    "compare": st.Page(HERE / "views/compare.py", title="Compare", icon=":material/compare_arrows:",
                       url_path="compare"),
    "learn": st.Page(HERE / "views/learn.py", title="Learn", icon=":material/school:",
                     url_path="learn"),
    "release": st.Page(HERE / "views/release.py", title="Release", icon=":material/lock:",
                       url_path="release"),
    "mixtures": st.Page(HERE / "views/mixtures.py", title="Mixtures",
                        icon=":material/stacked_line_chart:", url_path="mixtures"),
    "generate": st.Page(HERE / "views/generate.py", title="Generate", icon=":material/auto_awesome:",
                        url_path="generate"),
    "present": st.Page(HERE / "views/present.py", title="Present", icon=":material/co_present:",
                       url_path="present"),
}
if classroom.on():  # a class's read-only server has no Release page (issue 37)
    del PAGES["release"]
st.session_state[keys.PAGES] = PAGES
# In classroom mode /release answers with why it is off (issue 43: it said "Page not found"); the
# page is hidden from the navigation and no link leads to it.
page = st.navigation(list(PAGES.values()) + ([st.Page(
    classroom.release_off, title="Release (off in classroom mode)", url_path="release",
    visibility="hidden")] if classroom.on() else []))
classroom.banner()

for notice in state.url_notices():
    st.warning(safe.md(notice))  # a link's text is shown as text

with st.sidebar.container(key=DATASET_SUMMARY):
    choice = data_source.current()
    if choice.dataset is not None:
        # The Release page states public facts only: never an upload's true row count (issue 25).
        st.caption(data_source.describe_public(choice.dataset) if page is PAGES.get("release")
                   else data_source.describe(choice.dataset))
    st.caption("Every parameter and the seed are in the URL: copy it to share this view.")
with st.sidebar:
    state.one_history_entry_per_switch()  # one Back per page switch (issue 27)
    a11y.install()  # focus ring, skip link to the page's main control (issue 36)

_laps = rerun_timing.Laps(f"main.py page={page.title}")
page.run()
_laps("page")
state.sync_url()
_laps.done()
