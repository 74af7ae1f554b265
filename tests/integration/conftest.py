"""Fixtures shared by the integration tests."""

import pytest


@pytest.fixture
def spy_loader(monkeypatch):
    """Every source the app asks the loader for."""
    import mha_core.api

    asked, real = [], mha_core.api.load_bert

    def load(source=None):
        asked.append(source)
        return real(source)

    monkeypatch.setattr(mha_core.api, "load_bert", load)
    return asked
