"""The ICS (FICS-style telnet) text interface: a second transport over the same hub.

``server.py`` listens and logs players in; ``session.py`` translates FICS command lines into
hub commands and hub messages into FICS text, through its parts (``lobby.py``, ``play.py``,
``people.py``, ``stored.py``, ``settings.py``, ``render.py``) over one shared ``state.py``; ``parse.py``, ``style12.py``, ``lines.py`` and
``variants.py`` are the pure pieces of that translation; ``review.py`` reads the store for
``games``, ``moves``, ``history`` and ``examine``. See docs/ics.md.
"""
