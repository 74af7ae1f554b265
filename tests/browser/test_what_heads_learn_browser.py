"""What heads learn in a real browser: the page draws its table's figures, and a click on a
point of one head's query/key scatter shows that token's attention in its sentence (the one
interaction AppTest cannot make)."""

from testkit.browser import no_exception
from tests.browser.test_analysis_pages_browser import open_page

# The query point furthest from every other point (so a click cannot hit a neighbour), its
# position on the page and its hover text
ISOLATED_QUERY = """() => {
  const gd = document.querySelector('.st-key-wh_qk_scatter .js-plotly-plot');
  // _fullData: plotly's decoded traces (gd.data keeps the base64 arrays Streamlit sent)
  if (!gd || !gd._fullLayout || !gd._fullData || gd._fullData.length !== 2) return null;
  const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis;
  const px = (t, i) => [xa._offset + xa.l2p(t.x[i]), ya._offset + ya.l2p(t.y[i])];
  const all = gd._fullData.flatMap(t => Array.from(t.x, (_, i) => px(t, i)));
  const q = gd._fullData[0];
  let best = null, far = -1;
  for (let i = 0; i < q.x.length; i++) {
    const [x, y] = px(q, i);
    if (x < xa._offset + 10 || x > xa._offset + xa._length - 10) continue;
    if (y < ya._offset + 10 || y > ya._offset + ya._length - 10) continue;
    let near = Infinity;
    for (const [u, v] of all) {
      const d = Math.hypot(u - x, v - y);
      if (d > 0 && d < near) near = d;
    }
    if (near > far) { far = near; best = {x, y, text: q.text[i], far}; }
  }
  const box = gd.getBoundingClientRect();
  return best && {x: box.left + best.x, y: box.top + best.y, text: best.text, far: best.far};
}"""


def test_click_a_query_to_see_its_attention(app_url, page):
    open_page(page, app_url, "What heads learn")
    page.locator(".st-key-wh_matrix .main-svg").first.wait_for(timeout=120_000)
    page.locator(".st-key-wh_arcs .main-svg").first.wait_for(timeout=60_000)
    page.locator(".st-key-wh_qk_on label").click()
    page.wait_for_function(ISOLATED_QUERY, timeout=120_000)
    page.locator(".st-key-wh_qk_scatter").scroll_into_view_if_needed()  # a click must be seen
    point = page.evaluate(ISOLATED_QUERY)
    assert point["far"] > 4, point  # pixels to its nearest neighbour
    token = point["text"].split("“", 1)[1].split("”", 1)[0]
    page.mouse.click(point["x"], point["y"])
    title = page.locator(".st-key-wh_qk_attention .gtitle")
    title.wait_for(timeout=60_000)
    assert f"“{token}” as a query in its sentence" in title.text_content()
    assert no_exception(page)
