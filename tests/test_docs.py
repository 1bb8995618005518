"""The documentation agrees with the tree.

The README's layout table is the map a newcomer reads first, so it must name every
top-level package and nothing that is not there; every relative link in README.md and
docs/*.md must lead to a file of this repository (never outside it), and a link with an
``#anchor`` to a heading of that file. The ``>>>`` examples themselves run as doctests
(``--doctest-glob=*.md`` in pyproject.toml); the last test keeps that switched on.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
PAGES = [README, *DOCS]

_FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.MULTILINE | re.DOTALL)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)
_LAYOUT_ROW = re.compile(r"^\|\s*`([^`]+)`\s*\|", re.MULTILINE)


def _prose(text: str) -> str:
    """The page without its code: fenced blocks and inline code hold no links or headings."""
    return _INLINE_CODE.sub("", _FENCE.sub("", text))


def _section(text: str, title: str) -> str:
    match = re.search(rf"^## {re.escape(title)}\s*$(.*?)(?=^## |\Z)", text, re.MULTILINE | re.DOTALL)
    assert match, f"README.md has no '## {title}' section"
    return match.group(1)


def layout_paths() -> list[str]:
    """The first cell of every row of the README's layout table, as written (`games/ledger/`)."""
    return _LAYOUT_ROW.findall(_section(README.read_text(encoding="utf-8"), "Layout"))


def top_level_packages() -> list[str]:
    return sorted(
        f"{p.name}/"
        for p in ROOT.iterdir()
        if p.is_dir() and not p.name.startswith(".") and (p / "__init__.py").is_file()
    )


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link in a heading keeps its text
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for heading in _HEADING.findall(_FENCE.sub("", page.read_text(encoding="utf-8"))):
        base = slug(heading)
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def relative_links(page: Path) -> list[str]:
    links = _LINK.findall(_prose(page.read_text(encoding="utf-8")))
    return [t for t in links if not re.match(r"^[a-z][a-z0-9+.-]*:", t, re.IGNORECASE)]


def test_the_layout_table_is_there_and_lists_the_docs():
    paths = layout_paths()
    assert len(paths) >= 8, paths
    assert "docs/" in paths
    assert len(paths) == len(set(paths)), "a folder is listed twice"


@pytest.mark.parametrize("path", layout_paths())
def test_every_folder_in_the_layout_table_exists(path):
    assert path.endswith("/"), f"{path!r}: the layout table lists folders, written with a trailing /"
    assert (ROOT / path).is_dir(), f"README's layout table lists {path}, which is not in the tree"


def test_every_top_level_package_is_in_the_layout_table():
    missing = sorted(set(top_level_packages()) - set(layout_paths()))
    assert not missing, f"packages missing from README's layout table: {missing}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_leads_to_a_file_here(page):
    broken = []
    for target in relative_links(page):
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.is_relative_to(ROOT):
            broken.append(f"{target}: outside the repository")
        elif not dest.exists():
            broken.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target}: no heading #{anchor} in {dest.relative_to(ROOT)}")
    assert not broken, f"{page.relative_to(ROOT)}: " + "; ".join(broken)


def test_the_readme_links_every_page_of_docs():
    linked = {(README.parent / t.partition("#")[0]).resolve() for t in relative_links(README)}
    unlinked = [str(p.relative_to(ROOT)) for p in DOCS if p.resolve() not in linked]
    assert not unlinked, f"README.md does not link {unlinked}"


def test_the_examples_in_the_docs_run_as_doctests():
    options = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pytest"]["ini_options"]
    assert "--doctest-glob=*.md" in options["addopts"].split()
    assert {"README.md", "docs"} <= set(options["testpaths"])
    assert ">>> " in README.read_text(encoding="utf-8")
