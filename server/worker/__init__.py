"""Engine workers: separate processes that pull move and analysis jobs from the
server over HTTP (fishnet-style) and answer them with Debian engines, every engine move checked
by server.rules. See docs/engines.md."""
