"""The README and the pages under docs/: every relative link (and its #anchor) resolves,
the README shows the set-up commands and links every page, and the pages stay short."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import REPO

DOCS = sorted((REPO / "docs").glob("*.md"))
PAGES = [
    REPO / "README.md",
    REPO / "RELIABILITY.md",
    REPO / "ring" / "PROTOCOL.md",
    REPO / "bench" / "RESULTS.md",
    REPO / "bindings" / "c" / "README.md",
    REPO / "bindings" / "python" / "README.md",
    *DOCS,
]

FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.M | re.S)
CODE_SPAN = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$", re.M)


def prose(path: Path) -> str:
    """The page without its code blocks and code spans, where links are not links."""
    return CODE_SPAN.sub("", FENCE.sub("", path.read_text(encoding="utf-8")))


def anchors(path: Path) -> set[str]:
    """The #anchors GitHub gives the page's headings: lower case, punctuation dropped,
    spaces to hyphens, -1, -2 ... for repeats."""
    seen: dict[str, int] = {}
    out = set()
    for title in HEADING.findall(FENCE.sub("", path.read_text(encoding="utf-8"))):
        text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", title)  # a link's text only
        slug = re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def test_docs_links_resolve() -> None:
    bad = []
    for page in PAGES:
        for target in LINK.findall(prose(page)):
            if re.match(r"[a-z]+:", target):  # https:, mailto:
                continue
            path, _, anchor = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            where = f"{page.relative_to(REPO)}: ({target})"
            if not dest.exists():
                bad.append(f"{where}: no such file")
            elif anchor and (dest.suffix != ".md" or anchor not in anchors(dest)):
                bad.append(f"{where}: no heading with that anchor in {dest.name}")
    assert not bad, "\n".join(bad)


def test_readme_shows_setup_and_links_every_docs_page() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for command in ("make demo", "make test", "make wheel"):
        assert command in readme, command
    linked = {target.partition("#")[0] for target in LINK.findall(prose(REPO / "README.md"))}
    missing = [p.name for p in DOCS if f"docs/{p.name}" not in linked]
    assert not missing, f"README.md links no docs/ page named {missing}"


@pytest.mark.parametrize(
    "page, most",
    [(REPO / "README.md", 200), *((p, 300) for p in DOCS)],
    ids=lambda v: str(v.relative_to(REPO)) if isinstance(v, Path) else str(v),
)
def test_docs_pages_stay_short(page: Path, most: int) -> None:
    lines = len(page.read_text(encoding="utf-8").splitlines())
    assert lines <= most, f"{page.relative_to(REPO)}: {lines} lines, keep it under {most}"


def test_docs_anchor_slugs(tmp_path: Path) -> None:
    """The slugs above, on headings of the kinds these pages use."""
    page = tmp_path / "slugs.md"
    page.write_text(
        "# What `serve` does\n## Sizing `/dev/shm`\n## Spin (`SHMLOADER_SPIN_US`)\n"
        "## What is checked, and what only a CRC catches\n## Errors\n## Errors\n"
        "```sh\n# a comment, not a heading\n```\n",
        encoding="utf-8",
    )
    assert anchors(page) == {
        "what-serve-does",
        "sizing-devshm",
        "spin-shmloader_spin_us",
        "what-is-checked-and-what-only-a-crc-catches",
        "errors",
        "errors-1",
    }
