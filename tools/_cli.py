"""What the blackjack CLIs share: the ``--profile`` option, loading it, and the progress bar."""

from __future__ import annotations

import argparse
import sys

from blackjack.profiles import BUILTIN, Profile, profile
from games.errors import GameError

__all__ = ["add_profile_option", "load_profile", "progress_bar"]


def add_profile_option(parser: argparse.ArgumentParser, default: str) -> None:
    parser.add_argument("--profile", default=default, help=f"{', '.join(BUILTIN)} or a profile file")


def load_profile(name_or_path: str) -> Profile | None:
    """The named built-in profile or the profile file; ``None`` (the reason printed) when
    it cannot be loaded."""
    try:
        return profile(name_or_path)
    except (GameError, OSError) as exc:
        print(f"casino: {getattr(exc, 'message', exc)}", file=sys.stderr)
        return None


def progress_bar(done: int, total: int) -> None:
    """Draw ``done`` of ``total`` rounds on stderr, on one line rewritten in place."""
    width = 40
    filled = width * done // max(total, 1)
    sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done:,}/{total:,} rounds")
    if done >= total:
        sys.stderr.write("\n")
    sys.stderr.flush()
