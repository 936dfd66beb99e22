from fluxgui.adapters.textmatch import contains
from fluxgui.core.hits import Hit, find_folded, snippet


def test_find_folded_matches_as_the_store_scans_do_and_maps_back():
    text = "Straße A-1234 ok"
    assert find_folded(text, "STRAßE") == (0, 6)
    assert find_folded(text, "STRASSE") is None  # lower(), as the SQL scans: ß is not ss
    assert all(find_folded(text, q) is None or contains(text, q) for q in ("SS", "ß", "a-1"))
    lowered = "İstanbul x"  # "İ" lowers to two characters: the match maps back to one
    assert find_folded(lowered, "i̇stanbul") == (0, 8)
    start, length = find_folded(text, "a-1234")
    assert text[start:start + length] == "A-1234"
    assert find_folded(text, "missing") is None
    assert find_folded(text, "") is None


def test_snippet_cuts_around_the_match_on_one_line():
    text = "x" * 100 + "line\nA-1234\nend" + "y" * 100
    start, length = find_folded(text, "a-1234")
    piece, at = snippet(text, start, length, context=10)
    assert piece.startswith("…") and piece.endswith("…")
    assert "\n" not in piece
    assert piece[at:at + length] == "A-1234"


def test_hit_json_form():
    hit = Hit("s1", 7, "user", "…order A-1234…", 7, 6)
    assert hit.to_dict() == {"session_id": "s1", "message_id": 7, "role": "user",
                             "snippet": "…order A-1234…", "match": [7, 6]}
