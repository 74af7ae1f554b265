"""The Copy link box's QR code: zxing-cpp (an independent, maintained decoder) reads the PNG
back as the students' link, for short and long links."""

import io

import pytest
import zxingcpp
from PIL import Image

from headscope.ui.share import qr_png

LINKS = [
    "http://localhost:8501/?model=bundled&text=I%20saw%20the%20man%20with%20a%20telescope."
    "&layer=2&head=10&focus=with",
    "https://class.example.org/headscope/two_readings?a=The%20astronomer%20saw%20the%20man%20"
    "with%20a%20telescope.&b=The%20man%20saw%20the%20astronomer%20with%20a%20telescope.&focus=with",
    "http://10.0.0.5:8501/" + "?text=" + "x%20" * 400,  # a long sentence: a large version
]


@pytest.mark.parametrize("link", LINKS)
def test_the_qr_code_decodes_to_the_link(link):
    image = Image.open(io.BytesIO(qr_png(link)))
    found = zxingcpp.read_barcodes(image)
    assert [r.text for r in found] == [link]
    assert found[0].format == zxingcpp.BarcodeFormat.QRCode


def test_a_different_link_gives_a_different_code():
    assert qr_png(LINKS[0]) != qr_png(LINKS[0] + "&head=3")


def test_a_link_too_long_for_any_qr_code_gives_none_and_no_error():
    # 2,000 CJK characters in the link: 18 kB percent-encoded, past version 40's ~2,300 bytes
    link = "http://localhost:8501/?text=" + "%E6%BC%A2" * 2000
    assert qr_png(link) is None
    assert qr_png(link[:300]) is not None  # the same kind of link, short, still has one
