"""The spec, annotated: the spec document of ``contract/spec/`` rendered as a page on which every catalogued
requirement's quote is marked in place, so a reader sees a verdict among the sentences around it, and the
passages no requirement quotes stay unmarked, so the catalog's gaps show too.

The marked document depends on the spec and the catalog only, so it is built once per process; a run or a
matrix adds its verdicts as data the page's script paints with.
"""

from __future__ import annotations

import bisect
import functools
import html
import itertools
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token

from .verdicts import Verdict

SPEC_FILE = "service-interface.md"
PAGE = "spec.html"
TEMPLATE = "spec.html.j2"
# Private-use characters stand in for the marks while Markdown renders the source: markdown-it passes them
# through as text, and they are swapped for HTML afterwards.
_OPEN, _END, _CLOSE, _CHIP = "\ue000", "\ue001", "\ue002", "\ue003"
_SENTINEL = re.compile(f"{_OPEN}(\\d+){_END}|{_CLOSE}|{_CHIP}(\\d+){_END}")
# Inline Markdown a mark must not cut in two (its HTML would nest wrongly): code spans and strong emphasis.
# A line's block markers (a heading's hashes, a list item's bullet or number, a quote's ">"): a mark starts after
# them, or the line would no longer be the block it is.
_LEAD = re.compile(r"\s*(?:#{1,6}\s+|[-*+]\s+|\d+[.)]\s+|>\s*)*")
_ATOMS = re.compile(r"(?<!`)(`+)(?!`).+?(?<!`)\1(?!`)|\*\*.+?\*\*")


@dataclass(frozen=True)
class Place:
    """Where one excerpt of a quote stands: a 0-based source line, and the excerpt's span in it (a whole
    table row when ``row``)."""

    line: int
    start: int
    end: int
    row: bool = False


@dataclass
class Annotation:
    """The spec rendered with its marks, and what could not be placed."""

    body: str
    places: dict[str, list[Place]] = field(default_factory=dict)
    unplaced: list[tuple[str, str]] = field(default_factory=list)  # (requirement id, excerpt) not in the spec
    blocks: int = 0  # paragraphs, list items and table rows
    gaps: int = 0  # ... of which no requirement quotes a word


def spec_path(contract: Any) -> Path | None:
    """The spec copy beside the contract's catalog, or None (a contract built in memory has none)."""
    directory = getattr(contract, "directory", None)
    path = Path(directory) / "spec" / SPEC_FILE if directory is not None else None
    return path if path is not None and path.is_file() else None


def _headings(lines: Sequence[str]) -> list[tuple[str, str]]:
    """Per line, the titles of the part (``##``) and the section (``###``) it stands under."""
    part = section = ""
    out = []
    for line in lines:
        m = re.match(r"(#{2,3})\s+(.*)", line)
        if m and len(m.group(1)) == 2:
            part, section = m.group(2).strip(), ""
        elif m:
            section = m.group(2).strip()
        out.append((part, section))
    return out


def _fits(section: str, heading: tuple[str, str]) -> int:
    """How well a catalog ``section`` ("Part > Section, row ...") names the headings a line stands under."""
    names = [s.split(",")[0].strip() for s in str(section or "").split(" > ")]
    if not names or names[0] != heading[0]:
        return 0
    return 2 if len(names) > 1 and heading[1].startswith(names[1]) else 1


def _squeezed(text: str) -> tuple[str, list[int]]:
    """``text`` with each run of spaces and tabs as one space, and each of its characters' offset in ``text``
    (the catalog's quotes are compared with the spec so, as the catalog's own tests compare them)."""
    chars, origin = [], []
    for i, ch in enumerate(text):
        blank = ch in " \t"
        if blank and chars and chars[-1] == " ":
            continue
        chars.append(" " if blank else ch)
        origin.append(i)
    return "".join(chars), origin


def locate(lines: Sequence[str], requirements: Mapping[str, Mapping[str, Any]]
           ) -> tuple[dict[str, list[Place]], list[tuple[str, str]]]:
    """Each requirement's excerpts (``quote`` split at " ... ") in the spec's lines: on the line under the
    headings its ``section`` names when the words stand in several places, after its previous excerpt
    when it can; an excerpt of a table row that holds a ``|`` marks the whole row."""
    heads = _headings(lines)
    text, origin = _squeezed("\n".join(lines))
    starts = list(itertools.accumulate((len(line) + 1 for line in lines), initial=0))
    places: dict[str, list[Place]] = {}
    unplaced: list[tuple[str, str]] = []
    for rid, req in requirements.items():
        previous = Place(-1, 0, 0)
        for piece in (p.strip() for p in str(req.get("quote") or "").split(" ... ")):
            if not piece:
                continue
            needle, hits = " ".join(piece.split()), []
            at = text.find(needle)
            while at >= 0:
                start, end = origin[at], origin[at + len(needle) - 1] + 1
                n = bisect.bisect_right(starts, start) - 1
                row = "|" in piece and lines[n].lstrip().startswith("|")
                hits.append(Place(n, start - starts[n], end - starts[n], row))
                at = text.find(needle, at + 1)
            if not hits:
                unplaced.append((rid, piece))
                continue
            best = max(hits, key=lambda h: (_fits(req.get("section"), heads[h.line]),
                                            (h.line, h.start) >= (previous.line, previous.end)))
            places.setdefault(rid, []).append(best)
            previous = best
    return places, unplaced


def _snap(i: int, atoms: list[tuple[int, int]], outward: int) -> int:
    """``i`` moved out of any atom it falls inside (to its start when ``outward`` < 0, else to its end)."""
    inside = [a if outward < 0 else b for a, b in atoms if a < i < b]
    return (min(inside) if outward < 0 else max(inside)) if inside else i


def _mark_line(line: str, spans: list[tuple[int, int, int]], segments: list[tuple[int, ...]]) -> str:
    """``line`` with sentinels around each run of text the same requirements quote (``spans``: start, end,
    requirement index), and a chip sentinel where each excerpt ends."""
    atoms, lead = [m.span() for m in _ATOMS.finditer(line)], _LEAD.match(line).end()
    spans = [(max(_snap(s, atoms, -1), lead), _snap(e, atoms, 1), k) for s, e, k in spans]
    cuts = sorted({s for s, _, _ in spans} | {e for _, e, _ in spans})
    inserts: dict[int, list[tuple[int, str]]] = {}
    for a, b in itertools.pairwise(cuts):
        covering = tuple(sorted({k for s, e, k in spans if s <= a and b <= e}))
        if covering:
            segments.append(covering)
            inserts.setdefault(a, []).append((2, f"{_OPEN}{len(segments) - 1}{_END}"))
            inserts.setdefault(b, []).append((0, _CLOSE))
    for s, e, k in spans:
        inserts.setdefault(e, []).append((1, f"{_CHIP}{k}{_END}"))
    out, last = [], 0
    for pos in sorted(inserts):
        out += [line[last:pos], *(text for _, text in sorted(inserts[pos], key=lambda x: x[0]))]
        last = pos
    return "".join(out) + line[last:]


def renderer() -> MarkdownIt:
    """CommonMark with tables, raw HTML shown as text: the spec is prose, never markup for the page."""
    return MarkdownIt("commonmark", {"html": False}).enable("table")


def _chips(ids: Sequence[str]) -> str:
    return "".join(f'<a class="rid" data-r="{html.escape(r)}" href="index.html#req-{html.escape(r)}">'
                   f"{html.escape(r)}</a>" for r in ids)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _decorate(tokens: list[Token], rows: dict[int, list[str]], marked: set[int], parts: Mapping[str, str]
              ) -> tuple[list[Token], int, int]:
    """Table rows a quote names whole get their mark and chips; every paragraph, list item and body row no
    quote touches gets the ``gap`` class; headings get anchors (``part-<slug>`` for the spec's parts)."""
    blocks = gaps = 0
    carrier: Token | None = None
    in_body = False
    anchors: set[str] = set()
    for i, tok in enumerate(tokens):
        if tok.type in ("tbody_open", "tbody_close"):
            in_body = tok.type == "tbody_open"
        if tok.type == "list_item_open":
            carrier = tok
        if tok.type == "heading_open" and i + 1 < len(tokens):
            title = _SENTINEL.sub("", tokens[i + 1].content).strip()
            anchor = f"part-{parts[title]}" if tok.tag == "h2" and title in parts else _slug(title)
            while anchor in anchors:  # the spec repeats section titles across its parts
                anchor += "-"
            anchors.add(anchor)
            tok.attrSet("id", anchor)
        block = tok.type == "paragraph_open" or (tok.type == "tr_open" and in_body)
        if block and tok.map:
            blocks += 1
            if tok.type == "tr_open" and tok.map[0] in rows:
                tok.attrSet("class", "q row")
                tok.attrSet("data-r", " ".join(rows[tok.map[0]]))
            elif not set(range(*tok.map)) & marked:
                (carrier if tok.hidden and carrier is not None else tok).attrSet("class", "gap")
                gaps += 1
    return _row_chips(tokens, rows), blocks, gaps


def _row_chips(tokens: list[Token], rows: dict[int, list[str]]) -> list[Token]:
    """The chips of a whole-row mark, in the row's last cell."""
    out: list[Token] = []
    row: list[str] = []
    for tok in tokens:
        if tok.type == "tr_open":
            row = rows.get(tok.map[0], []) if tok.map else []
        if tok.type == "tr_close" and row and out and out[-1].type == "td_close":
            chip = Token("html_block", "", 0)
            chip.content = _chips(row)
            out.insert(len(out) - 1, chip)
        out.append(tok)
    return out


def annotate(spec: str, requirements: Mapping[str, Mapping[str, Any]], parts: Mapping[str, str] | None = None
             ) -> Annotation:
    """The spec (Markdown) as HTML with each requirement's excerpts marked (``<mark class="q" data-r="IDS">``,
    then a chip linking to ``index.html#req-ID``); ``parts`` maps part titles to slugs for the anchors."""
    lines = spec.split("\n")
    places, unplaced = locate(lines, requirements)
    index = {rid: k for k, rid in enumerate(requirements)}
    ids = list(requirements)
    spans: dict[int, list[tuple[int, int, int]]] = {}
    rows: dict[int, list[str]] = {}
    for rid, found in places.items():
        for p in found:
            if p.row and rid not in rows.get(p.line, []):
                rows.setdefault(p.line, []).append(rid)
            elif not p.row:
                spans.setdefault(p.line, []).append((p.start, p.end, index[rid]))
    segments: list[tuple[int, ...]] = []
    for n, line_spans in spans.items():
        lines[n] = _mark_line(lines[n], line_spans, segments)
    md = renderer()
    tokens, blocks, gaps = _decorate(md.parse("\n".join(lines)), rows, set(spans) | set(rows), parts or {})
    rendered = md.renderer.render(tokens, md.options, {})

    def swap(m: re.Match) -> str:
        if m.group(1) is not None:
            return f'<mark class="q" data-r="{html.escape(" ".join(ids[k] for k in segments[int(m.group(1))]))}">'
        return "</mark>" if m.group(2) is None else _chips([ids[int(m.group(2))]])

    seen: set[str] = set()

    def anchor(m: re.Match) -> str:  # the first chip of a requirement is where links to it land
        if m.group(1) in seen:
            return m.group(0)
        seen.add(m.group(1))
        return f'{m.group(0)} id="q-{m.group(1)}"'

    body = re.sub(r'<a class="rid" data-r="([^"]+)"', anchor, _SENTINEL.sub(swap, rendered))
    return Annotation(body, places, unplaced, blocks, gaps)


@functools.lru_cache(maxsize=4)
def _cached(spec: str, quotes: tuple[tuple[str, str, str], ...], parts: tuple[tuple[str, str], ...]) -> Annotation:
    return annotate(spec, {rid: {"quote": q, "section": s} for rid, q, s in quotes}, dict(parts))


def annotation(contract: Any) -> Annotation | None:
    """The contract's spec copy annotated with its catalog (built once per process), or None without one."""
    path = spec_path(contract)
    if path is None:
        return None
    quotes = tuple((rid, str(r.get("quote") or ""), str(r.get("section") or ""))
                   for rid, r in contract.requirements.items())
    parts = tuple((p["title"], p["slug"]) for p in contract.parts)
    return _cached(path.read_text(encoding="utf-8"), quotes, parts)


def render_page(ann: Annotation, *, title: str, columns: Sequence[str], verdicts: Mapping[str, Sequence[str | None]],
                back: str) -> str:
    """The annotated spec page: ``verdicts`` maps a requirement id to its verdict in each of ``columns``;
    ``back`` names the page beside it the chips lead to (``index.html``: the run's report or the matrix)."""
    # the report's template environment, imported here because html imports this module
    from .html import _environment

    data = {"columns": list(columns), "verdicts": {rid: list(v) for rid, v in verdicts.items()},
            "order": [v.value for v in Verdict], "labels": {v.value: v.label for v in Verdict}}
    return _environment().get_template(TEMPLATE).render(
        ann=ann, title=title, columns=list(columns), verdicts=list(Verdict), back=back,
        data=json.dumps(data, separators=(",", ":")).replace("<", "\\u003c"))


def write_page(directory: str | Path, contract: Any, *, title: str, columns: Sequence[str],
               verdicts: Mapping[str, Sequence[str | None]], back: str) -> Path | None:
    """Write ``spec.html`` into ``directory``; None when the contract has no spec copy."""
    ann = annotation(contract)
    if ann is None:
        return None
    path = Path(directory) / PAGE
    path.write_text(render_page(ann, title=title, columns=columns, verdicts=verdicts, back=back), encoding="utf-8")
    return path
