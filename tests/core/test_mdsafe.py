"""fluxgui.core.mdsafe: Markdown that a real CommonMark renderer (markdown-it-py, with raw
HTML allowed and its link validation switched off, so that the test sees every link the
Markdown makes) shows safely.

Assistant Markdown: no raw HTML token, no image, no link whose target is not http(s) or
mailto, for hostile inputs (nested brackets, backticks, fences in text, ``<`` in code,
reference definitions, autolinks, comments, ``<details>``) and for thousands of random
mixtures of them; code keeps its ``<`` and single line breaks are hard breaks. Literal
text: the code block's content is the stored text, character for character.
"""

from __future__ import annotations

import random

import pytest
from markdown_it import MarkdownIt

from fluxgui.core.mdsafe import (
    fence_for,
    fence_for_pieces,
    inline_text,
    literal_block,
    markdown,
    quote,
)

SAFE_SCHEMES = ("http://", "https://", "mailto:")


def _renderer(preset: str) -> MarkdownIt:
    md = MarkdownIt(preset, {"html": True})
    md.validateLink = lambda url: True  # see every link, whatever its scheme
    return md


#: CommonMark as specified, and markdown-it's default (GFM tables and strikethrough)
RENDERERS = [_renderer("commonmark"), _renderer("default")]


def tokens(md_text: str, md: MarkdownIt | None = None) -> list:
    """Every token of ``md_text``, inline children included, in order."""
    out = []
    for t in (md or RENDERERS[0]).parse(md_text):
        out.append(t)
        out.extend(t.children or [])
    return out


def problems(md_text: str) -> list[str]:
    """What is active in ``md_text`` for any of the renderers (empty: nothing)."""
    found = []
    for md in RENDERERS:
        for t in tokens(md_text, md):
            if t.type in ("html_block", "html_inline"):
                found.append(f"raw HTML {t.content!r}")
            elif t.type == "image":
                found.append(f"image {t.attrGet('src')!r}")
            elif t.type == "link_open":
                href = str(t.attrGet("href") or "")
                if not href.lower().startswith(SAFE_SCHEMES):
                    found.append(f"link to {href!r}")
    return found


def md(text: str) -> str:
    return "".join(markdown(text))


def test_unsanitised_markdown_is_active_in_the_renderer():
    # the check itself finds what it must: raw hostile Markdown is not inert
    assert problems("<script>x</script> ![i](https://e/i.png) [a](javascript:x)")


HOSTILE = [
    "<script>alert(1)</script>",
    "hello <img src=x onerror=alert(1)> world",
    '<a href="javascript:alert(1)">click</a>',
    "![tracker](https://evil.example/t.png)",
    "![alt][ref]\n\n[ref]: https://evil.example/t.png",
    "[click](javascript:alert(1))",
    "[click]( javascript:alert(1) )",
    "[click](<javascript:alert(1)>)",
    "[click](JaVaScRiPt:alert(1))",
    "[click](&#106;avascript:alert(1))",
    "[click](data:text/html;base64,PHNjcmlwdD4=)",
    "[click](file:///etc/passwd)",
    "[click](vbscript:msgbox)",
    "[relative](../../secret)",
    "[x]: javascript:alert(1)\n\n[x] and [y][x] and [x][]",
    "[x]:\n  javascript:alert(1)\n\n[x]",
    "> [x]: javascript:alert(1)\n\n[x]",
    "- [x]: javascript:alert(1)\n\n[x]",
    "[multi\nline]: javascript:alert(1)\n\n[multi line]",
    "<javascript:alert(1)>",
    "<http://ok.example>",
    "<!-- hidden --> text",
    "<details><summary>s</summary>body</details>",
    "<details>\n\nbody\n\n</details>",
    "[a [b](javascript:x)](http://ok.example)",
    "[a](http://ok.example) [b](javascript:x)",
    "[[nested]](javascript:x)",
    "[a](http://x/`) <script>alert(1)</script> `c`",
    "`a\nb` <script>alert(1)</script> `c`",
    "[a`b]: javascript:x \"`\"\n\n[a`b]",
    "`code` <b>bold</b> `more`",
    "| a | `<b` |\n|---|---|\n| `x | <script>y</script>` |",
    "```\n<script>in code</script>\n```\n<script>after</script>",
    "- a\n  ```\nb\n<script>alert(1)</script>\n```",
    "- ```\n  x\n  ```\n  <script>alert(1)</script>",
    "```js|x\n| a |\n|---|\n[a](javascript:x)\n```",
    "   ```\n x\n   ```\n <script>alert(1)</script>",
    "```\nunclosed <b>",
    "    <script>indented</script>",
    "\\<script>already escaped</script>",
    "\\\\<script>escaped backslash</script>",
    "a\r<script>carriage return</script>",
    "![a](https://e/i.png \"t\")![b]",
    "[a](https://ok.example \"title with ` backtick\") `c <script>x</script>`",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_assistant_markdown_renders_inert(text):
    out = md(text)
    assert problems(out) == [], out


def test_code_keeps_lt_literal_and_html_outside_code_is_text():
    out = md("Use `a<b` here, <b>not bold</b>.\n\n```html\n<script>x()</script>\n```")
    toks = tokens(out)
    assert [t.content for t in toks if t.type == "code_inline"] == ["a<b"]
    assert [t.content for t in toks if t.type == "fence"] == ["<script>x()</script>\n"]
    text = "".join(t.content for t in toks if t.type == "text")
    assert "<b>not bold</b>" in text


def test_safe_links_stay_links_and_images_become_links():
    out = md("[docs](https://example.com/a(b)c) ![pic](https://example.com/p.png) <mailto:a@b.c>")
    links = [t.attrGet("href") for t in tokens(out) if t.type == "link_open"]
    assert links == ["https://example.com/a(b)c", "https://example.com/p.png"]
    assert not any(t.type == "image" for t in tokens(out))


def test_unsafe_link_shows_its_text_and_target():
    out = md("see [click](javascript:alert(1)) now")
    rendered = RENDERERS[0].render(out)
    assert "[click](javascript:alert(1))" in rendered and "<a " not in rendered


def test_single_line_breaks_are_hard_breaks_and_paragraphs_stay():
    out = md("line one\nline two\n\nnext paragraph\n- item\n- item two")
    rendered = RENDERERS[0].render(out)
    assert "line one<br />\nline two</p>" in rendered
    assert "<p>next paragraph</p>" in rendered
    assert "<li>item</li>" in rendered and "<li>item two</li>" in rendered
    # a line that already ends in a hard break keeps it as it was
    assert md("a\\\nb") == "a\\\nb"
    assert md("a   \nb") == "a   \nb"


def test_fences_are_closed_and_do_not_swallow_what_follows():
    out = md("```python\nprint(1)") + "\n\nafter"
    toks = tokens(out)
    assert [t.content for t in toks if t.type == "fence"] == ["print(1)\n"]
    assert any(t.type == "text" and t.content == "after" for t in toks)


def test_list_item_fences_keep_their_code():
    out = md("1. step\n   ```python\n   print(a < b)\n   ```\n2. next")
    assert [t.content for t in tokens(out) if t.type == "fence"] == ["print(a < b)\n"]


FRAGMENTS = [
    "<script>x</script>", "<img src=x onerror=y>", "<!-- c -->", "<details>", "</details>",
    "<javascript:alert(1)>", "<http://ok.com>", "[", "]", "(", ")", "![i](http://e/i.png)",
    "![i]", "[a](javascript:x)", "[a](http://ok)", "[a](<javascript:x>)", "[x]: javascript:y",
    "[x]: http://ok", "[x]", "[x][]", "`", "``", "```", "~~~", "    ", "   ", " ", "\n", "\n",
    "\n\n", "\t", "- ", "1. ", "> ", "|", "| a | b |\n|---|---|\n", "\\", "\\`", "!", "&#60;",
    ":", "javascript:", '"t"', "text", "*", "_", "#", "---", "\r\n", "](", "]:",
    "](javascript:z)", '](http://ok "`")', "<", "`<x>`", "```\n<y>\n```", "\n   ```\n",
    "- ```\n", "> ```\n", "\t```", "`a\nb`", "[a\nb]: javascript:x", "[a](\nhttp://ok\n\"t\")",
    "<!-->", "<?php ?>", "<![CDATA[ x ]]>", "<div\n>", "]: \n javascript:x", "````",
]


@pytest.mark.parametrize("seed", range(4))
def test_random_mixtures_render_inert(seed):
    rng = random.Random(seed)
    for _ in range(750):
        text = "".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 30)))
        out = md(text)
        assert problems(out) == [], (text, out)


AS_TYPED = [
    "2*3*4 = 24",
    "__init__ and _private_ and **not bold**",
    "# 1 priority: refund",
    "Jane Doe\n12 High Street\nFlat 3\nSpringfield 12345",
    "    indented four\n\ttabbed\n  two",
    "<script>alert(1)</script> [x](javascript:y) ![i](https://e/i.png)",
    "Run ```code``` please\n````\nfour\n````",
    "&amp; &lt; \\* \\\\",
    "trailing spaces   \n\n\nthree blank lines above",
    "- not a list\n1. nor this\n> nor a quote\n---",
    "| a | b |\n|---|---|",
    "",
]


@pytest.mark.parametrize("text", AS_TYPED)
def test_literal_block_renders_exactly_as_stored(text):
    out = "".join(literal_block(text))
    for md_ in RENDERERS:
        fences = [t for t in tokens(out, md_) if t.type == "fence"]
        assert len(fences) == 1
        assert fences[0].content == text + "\n"  # line by line, as stored
        assert problems(out) == []


def test_literal_block_fence_outlasts_backticks():
    assert fence_for("a ````` b") == "``````"
    assert fence_for("plain") == "```"
    assert "".join(literal_block("x", "")) == "```\nx\n```\n"


@pytest.mark.parametrize("seed", range(3))
def test_fence_for_pieces_matches_the_joined_text(seed):
    rng = random.Random(seed)
    for _ in range(300):
        text = "".join(rng.choice(["`", "``", "````", "a", "b\n", "`````"]) for _ in range(rng.randint(0, 30)))
        cuts = sorted(rng.sample(range(len(text) + 1), min(len(text) + 1, rng.randint(0, 6))))
        pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]
        assert fence_for_pieces(pieces) == fence_for(text), (text, pieces)


def test_inline_text_is_one_literal_line():
    s = "<script>x</script>\n[a](javascript:b) *c* `d` # e\u202e"
    out = "## Session " + inline_text(s)
    assert problems(out) == []
    heading = [t for t in tokens(out) if t.type == "inline"][0]
    assert "".join(c.content for c in heading.children) == "Session " + " ".join(s.split())


def test_quote_prefixes_every_line():
    out = "".join(quote(markdown("one\n<b>two</b>\n\nthree")))
    assert out == "> one  \n> \\<b>two\\</b>\n> \n> three\n"
    assert problems(out) == []
