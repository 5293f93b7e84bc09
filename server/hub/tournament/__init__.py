"""The tournament core: arena, Swiss and round robin as pure functions of a tournament's
events, with injected time; no I/O (the hub's import contract). The adapter stores the events,
keeps a :class:`~.state.TournamentState`, and asks the core what to do next. docs/tournaments.md
describes the API and what remains to build."""
