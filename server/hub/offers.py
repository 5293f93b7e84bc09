"""Offers between the two players of a game (draw, takeback, rematch) as a small state machine.

States: *idle* or *pending from side s*. ``offer`` by s moves idle → pending(s), or completes an
agreement when the other side's offer is pending (offering what the opponent offers accepts it).
``accept``/``decline`` by the other side and ``cancel`` (a move, the game's end …) return to idle.
"""

from __future__ import annotations

from server.hub.errors import CommandError, ErrorCode
from server.rules import Side


class OfferBox:
    """One kind of offer (``name`` is used in messages, e.g. ``"draw"``)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.pending_from: Side | None = None

    @property
    def pending(self) -> bool:
        return self.pending_from is not None

    def check_offer(self, side: Side) -> None:
        """:raises CommandError: ``offer_pending`` if ``side``'s own offer is already pending."""
        if self.pending_from == side:
            raise CommandError(
                ErrorCode.OFFER_PENDING, f"Your {self.name} offer is already pending."
            )

    def offer(self, side: Side) -> bool:
        """``side`` offers; returns True when this meets the opponent's pending offer (agreement).

        :raises CommandError: ``offer_pending``.
        """
        self.check_offer(side)
        if self.pending_from == side.other:
            self.pending_from = None
            return True
        self.pending_from = side
        return False

    def check_answer(self, side: Side) -> None:
        """:raises CommandError: ``no_offer`` unless the opponent of ``side`` has an offer pending."""
        if self.pending_from != side.other:
            raise CommandError(ErrorCode.NO_OFFER, f"There is no {self.name} offer to answer.")

    def accept(self, side: Side) -> None:
        self.check_answer(side)
        self.pending_from = None

    def decline(self, side: Side) -> None:
        self.check_answer(side)
        self.pending_from = None

    def cancel(self) -> Side | None:
        """Withdraw any pending offer; returns the side that had offered (or ``None``)."""
        offered, self.pending_from = self.pending_from, None
        return offered
