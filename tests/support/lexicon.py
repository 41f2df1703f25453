"""A blocklist that remembers its verdicts, for tests that check many items drawn from the same words."""

from __future__ import annotations

from core.lexicon.blocklist import Blocklist


def remembering(bl: Blocklist) -> Blocklist:
    """``bl`` with each word's verdict (``Blocklist.blocks``, the real one) computed once: the same members and
    definition words recur across seeds and items, and every verdict is a few hundred ``fnmatch`` calls.
    ``blocked_in`` and everything else are ``Blocklist``'s own."""
    verdicts: dict[str, bool] = {}

    class Remembering(Blocklist):
        def blocks(self, word: str) -> bool:
            if word not in verdicts:
                verdicts[word] = Blocklist.blocks(self, word)
            return verdicts[word]

    return Remembering(bl.words, bl.globs, bl.groups)
