"""Variant hub: an online game server for chess and shogi variants."""
