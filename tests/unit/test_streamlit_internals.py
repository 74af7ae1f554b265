"""The one Streamlit internal headscope relies on (headscope/ui/st_internals.py; docs/limits.md
says why it is kept). If an upgrade removes one, this fails with a message that says what
broke and where, instead of a page misbehaving."""

import streamlit


def test_script_runs_still_go_through_the_method_the_run_slot_wraps():
    from headscope.ui.st_internals import script_run_hook_exists

    assert script_run_hook_exists(), (
        f"Streamlit {streamlit.__version__}'s ScriptRunner no longer runs each script run "
        "through _run_script(self, rerun_data): headscope.ui.st_internals.slot_script_runs "
        "(one run at a time per worker, headscope/ui/budget.py) must be rewritten for this "
        "version")


def test_st_internals_holds_one_hook():
    """One patch of Streamlit's internals (docs/limits.md): each installer here is one."""
    import ast
    import inspect

    import headscope.ui.st_internals as m

    tree = ast.parse(inspect.getsource(m))
    installers = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)
                  and any(getattr(d, "id", "") == "once_per_process" for d in n.decorator_list)]
    assert sorted(installers) == ["slot_script_runs"]
