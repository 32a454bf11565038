"""Issue 27: a bad URL value is explained in the page's words, never Python's."""

from app.components import state


def test_a_non_number_in_the_url_says_what_the_parameter_must_be():
    values, notices = state.parse_query({"seed": "abc", "rho": "zz", "k": "3"})
    assert values == {"k": 3}
    assert notices == ["URL parameter seed='abc' ignored: it must be an integer in [0, 2147483647].",
                       "URL parameter rho='zz' ignored: it must be a number in (0, 1000]."]
    assert not any("convert" in n for n in notices)
