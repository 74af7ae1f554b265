"""ui.st_internals.upload_refusal: the arithmetic of the upload cap, on made-up records."""

from types import SimpleNamespace

from ui.st_internals import upload_refusal

MB = 2**20


def rec(n: int):
    return SimpleNamespace(data=b"x" * n)


def test_a_session_past_its_share_is_refused():
    stored = {"a": rec(8 * MB), "b": rec(8 * MB)}
    assert upload_refusal(stored, 16 * MB, "c", 4 * MB + 1, 20 * MB, 100 * MB) is not None
    assert upload_refusal(stored, 16 * MB, "c", 4 * MB, 20 * MB, 100 * MB) is None
    assert "20 MB" in upload_refusal(stored, 16 * MB, "c", 5 * MB, 20 * MB, 100 * MB)


def test_a_file_sent_again_replaces_itself():
    stored = {"a": rec(10 * MB), "b": rec(10 * MB)}
    assert upload_refusal(stored, 20 * MB, "a", 10 * MB, 20 * MB, 100 * MB) is None
    assert upload_refusal(stored, 20 * MB, "a", 10 * MB + 1, 20 * MB, 100 * MB) is not None


def test_the_worker_total_counts_every_session():
    assert upload_refusal({}, 95 * MB, "a", 5 * MB, 20 * MB, 100 * MB) is None
    assert "100 MB" in upload_refusal({}, 95 * MB, "a", 5 * MB + 1, 20 * MB, 100 * MB)
