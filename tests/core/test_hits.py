from fluxgui.core.hits import Hit, find_folded, snippet


def test_find_folded_maps_back_through_length_changing_folds():
    text = "Straße A-1234 ok"
    assert find_folded(text, "STRASSE") == (0, 6)
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
