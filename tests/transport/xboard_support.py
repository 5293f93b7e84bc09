"""Running Debian's XBoard against the ICS port: Xvfb, a recording TCP proxy, the XBoard process.

Everything started here is a child process of the test (or a task), waited for on events —
Xvfb reports its display on a pipe (``-displayfd``), XBoard's lines are seen by the proxy,
window titles are awaited with ``xdotool search --sync`` — and killed afterwards: XBoard runs
in a session of its own, so its Fair-Max child goes with its process group.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shlex
import shutil
import signal
from collections.abc import AsyncIterator
from pathlib import Path

XBOARD = "/usr/games/xboard"
FAIRYMAX = "/usr/games/fairymax"
PROGRAMS = (XBOARD, FAIRYMAX, "Xvfb", "xdotool", "import")
TIMEOUT = 30.0


def require_programs() -> None:
    """A missing program fails the test (scripts/system-deps.sh installs them)."""
    missing = [p for p in PROGRAMS if shutil.which(p) is None and not Path(p).is_file()]
    assert not missing, f"missing programs (run scripts/system-deps.sh): {missing}"


async def _stop(process: asyncio.subprocess.Process, group: bool = False) -> None:
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            if group:
                os.killpg(process.pid, signal.SIGTERM)
            else:
                process.terminate()
        try:
            await asyncio.wait_for(process.wait(), 5)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                if group:
                    os.killpg(process.pid, signal.SIGKILL)
                else:
                    process.kill()
            await process.wait()
    elif group:
        # XBoard is gone; its engine may not be.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)


@contextlib.asynccontextmanager
async def xvfb() -> AsyncIterator[str]:
    """A virtual X display (``:N``) for the duration of the block."""
    read, write = os.pipe()
    process = await asyncio.create_subprocess_exec(
        "Xvfb", "-displayfd", str(write), "-screen", "0", "1024x768x24", "-nolisten", "tcp",
        pass_fds=(write,), stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    os.close(write)
    try:
        loop = asyncio.get_running_loop()
        with os.fdopen(read, "rb") as pipe:
            number = await asyncio.wait_for(loop.run_in_executor(None, pipe.readline), TIMEOUT)
        assert number.strip().isdigit(), f"Xvfb did not start: {number!r}"
        yield f":{number.strip().decode()}"
    finally:
        await _stop(process)


class RecordingProxy:
    """Forwards one client (XBoard) to the ICS port and keeps every line the client sent."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.port = 0
        self.sent: list[str] = []
        self._changed = asyncio.Condition()
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._writers: list[asyncio.StreamWriter] = []

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for writer in self._writers:
            writer.transport.abort()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def wait_sent(self, text: str, timeout: float = TIMEOUT) -> int:
        """Wait until the client sent a line containing ``text``; its index in :attr:`sent`."""

        def found() -> int | None:
            return next((i for i, line in enumerate(self.sent) if text in line), None)

        async with self._changed:
            await asyncio.wait_for(self._changed.wait_for(lambda: found() is not None), timeout)
        index = found()
        assert index is not None
        return index

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        self._writers += [writer, up_writer]
        loop = asyncio.get_running_loop()
        for task in (
            loop.create_task(self._pipe(reader, up_writer, record=True)),
            loop.create_task(self._pipe(up_reader, writer, record=False)),
        ):
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _pipe(
        self, source: asyncio.StreamReader, sink: asyncio.StreamWriter, record: bool
    ) -> None:
        partial = b""
        with contextlib.suppress(OSError, asyncio.CancelledError):
            while data := await source.read(65536):
                sink.write(data)
                await sink.drain()
                if record:
                    partial += data
                    *lines, partial = partial.split(b"\n")
                    async with self._changed:
                        self.sent += [line.decode("utf-8", "replace").strip() for line in lines]
                        self._changed.notify_all()
        sink.transport.abort()


LIGHT, DARK = "#E8C87A", "#3F7F5F"
"""Flat square colours (no texture) that a screenshot can be measured by."""
FLAT = ["-useBoardTexture", "false", "-lightSquareColor", LIGHT, "-darkSquareColor", DARK,
        "-size", "49", "-animateMoving", "false", "-highlightLastMove", "false",
        "-messageSuppress", "Right-clicking menu item or dialog text pops up help on it"]  # fmt: skip
"""XBoard's options for a still board of flat colours."""


class XBoard:
    """One XBoard process in ICS mode; its console input is a pipe held open (XBoard logs out
    when its standard input ends)."""

    def __init__(self, display: str, workdir: Path, ics_port: int, logon: list[str],
                 options: list[str]) -> None:  # fmt: skip
        self.display = display
        self.workdir = workdir
        self.ics_port = ics_port
        self.logon = logon
        self.options = options
        self.process: asyncio.subprocess.Process | None = None
        self.debug_file = workdir / "xboard-debug.txt"

    async def start(self) -> None:
        logon = self.workdir / "logon.txt"
        logon.write_text("".join(line + "\n" for line in self.logon))
        args = [
            "-ics", "-icshost", "127.0.0.1", "-icsport", str(self.ics_port),
            "-icslogon", str(logon), "-saveSettingsOnExit", "false",
            "-settingsFile", str(self.workdir / "xboard.settings"),
            "-popupExitMessage", "false", "-debug", "-nameOfDebugFile", str(self.debug_file),
            *self.options,
        ]  # fmt: skip
        self.process = await asyncio.create_subprocess_exec(
            XBOARD,
            *args,
            stdin=asyncio.subprocess.PIPE,
            stdout=(self.workdir / "xboard.out").open("wb"),
            stderr=asyncio.subprocess.STDOUT,
            cwd=self.workdir,
            env={**os.environ, "DISPLAY": self.display, "HOME": str(self.workdir)},
            start_new_session=True,
        )

    async def stop(self) -> None:
        if self.process is not None:
            await _stop(self.process, group=True)

    def log(self, full: bool = False) -> str:
        """XBoard's debug log (by default its end, for assertion messages)."""
        if not self.debug_file.exists():
            return "(no debug log)"
        text = self.debug_file.read_text(errors="replace")
        return text if full else text[-3000:]


async def logged_in(display: str, workdir: Path, ics_port: int, logon: list[str],
                    options: list[str]) -> tuple[XBoard, RecordingProxy]:  # fmt: skip
    """XBoard started on ``display``, logging in with ``logon`` through a recording proxy to
    ``ics_port`` (stop both afterwards)."""
    proxy = RecordingProxy(ics_port)
    await proxy.start()
    xboard = XBoard(display, workdir, proxy.port, logon, options)
    await xboard.start()
    return xboard, proxy


async def window_titled(display: str, pattern: str, timeout: float = TIMEOUT) -> str:
    """Wait for a window whose title matches ``pattern`` (a regex); return the title."""
    env = {**os.environ, "DISPLAY": display}
    search = await asyncio.create_subprocess_exec(
        "xdotool", "search", "--sync", "--name", pattern,
        stdout=asyncio.subprocess.PIPE, env=env,
    )  # fmt: skip
    try:
        out, _ = await asyncio.wait_for(search.communicate(), timeout)
    except TimeoutError:
        await _stop(search)
        raise AssertionError(f"no window titled {pattern!r} on {display}") from None
    window = out.split()[0].decode()
    name = await asyncio.create_subprocess_exec(
        "xdotool", "getwindowname", window, stdout=asyncio.subprocess.PIPE, env=env
    )
    title, _ = await name.communicate()
    return title.decode().strip()


async def screenshot(display: str, path: Path) -> None:
    """The whole screen as a PNG (ImageMagick ``import``)."""
    env = {**os.environ, "DISPLAY": display}
    process = await asyncio.create_subprocess_exec("import", "-window", "root", str(path), env=env)
    assert await asyncio.wait_for(process.wait(), TIMEOUT) == 0


async def _convert(*args: str) -> str:
    process = await asyncio.create_subprocess_exec(
        "convert", *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL
    )
    out, _ = await asyncio.wait_for(process.communicate(), TIMEOUT)
    return out.decode()


async def colour_box(image: Path, colour: str) -> tuple[int, int, int, int] | None:
    """The bounding box (x, y, width, height) of the pixels of exactly ``colour``."""
    geometry = await _convert(
        str(image), "-fill", "black", "+opaque", colour, "-fill", "white", "-opaque", colour,
        "-format", "%@", "info:",
    )  # fmt: skip
    match = re.fullmatch(r"(\d+)x(\d+)\+(\d+)\+(\d+)", geometry.strip())
    if match is None or match.group(1) == "0":
        return None
    width, height, x, y = (int(g) for g in match.groups())
    return x, y, width, height


async def board_box(image: Path, dark: str) -> tuple[int, int, int, int]:
    """Where the board is: the bounding box of its dark squares (on the boards here a dark
    square sits in two opposite corners; the holdings beside a shogi board are light)."""
    box = await colour_box(image, dark)
    assert box is not None, f"no dark squares ({dark}) in {image}"
    return box


async def squares_across(image: Path, light: str, dark: str, rank_from_top: float) -> int:
    """How many squares a horizontal line through the board crosses, counted as runs of the
    square colours (at ``rank_from_top`` board heights from the top, 0 to 1)."""
    x, y, width, height = await board_box(image, dark)
    row = y + int(height * rank_from_top)
    text = await _convert(str(image), "-crop", f"{width}x1+{x}+{row}", "+repage", "txt:-")
    colours = re.findall(r"#([0-9A-Fa-f]{6})", text)
    runs = 0
    previous = ""
    for colour in colours:
        value = "#" + colour.upper()
        if value in (light.upper(), dark.upper()) and value != previous:
            runs += 1
        previous = value if value in (light.upper(), dark.upper()) else previous
    return runs


async def settled_board(
    display: str, image: Path, dark: str, attempts: int = 20
) -> tuple[int, int, int, int]:
    """Screenshots until the board (its dark squares) is where it was in the previous one:
    XBoard may still be resizing or redrawing just after it took a new board. Returns the
    board's box; ``image`` holds the last screenshot."""
    previous = None
    for _ in range(attempts):
        await screenshot(display, image)
        box = await colour_box(image, dark)
        if box is not None and box == previous:
            return box
        previous = box
    raise AssertionError(f"the board on {display} never settled (last box {previous})")


async def occupied_squares(image: Path, box: tuple[int, int, int, int], files: int, ranks: int,
                           light: str, dark: str) -> set[str]:  # fmt: skip
    """The squares (``a1`` …, the board seen from the first player) on which XBoard drew a
    piece: the middle of a flat-coloured square holds pixels of other colours only there. One
    crop of the whole board, read once."""
    x, y, width, height = box
    text = await _convert(str(image), "-crop", f"{width}x{height}+{x}+{y}", "+repage", "txt:-")
    flat = {light.upper(), dark.upper()}
    marked: set[tuple[int, int]] = set()
    size_x, size_y = width / files, height / ranks
    for match in re.finditer(r"^(\d+),(\d+):.*?#([0-9A-Fa-f]{6})", text, re.MULTILINE):
        px, py, colour = int(match.group(1)), int(match.group(2)), "#" + match.group(3).upper()
        file, row = int(px // size_x), int(py // size_y)
        inner_x, inner_y = px - file * size_x, py - row * size_y
        in_middle = size_x / 4 <= inner_x < 3 * size_x / 4 and size_y / 4 <= inner_y < 3 * size_y / 4
        if in_middle and colour not in flat:
            marked.add((file, ranks - 1 - row))
    return {f"{chr(ord('a') + file)}{rank + 1}" for file, rank in marked}


def xboard_options(variant: str) -> list[str]:
    """The XBoard options docs/ics.md gives for ``variant`` (its ``xboard …`` line)."""
    text = (Path(__file__).parents[2] / "docs" / "ics.md").read_text()
    match = re.search(rf"<!-- xboard {variant} -->\n```\n(xboard .*?)\n```", text, re.DOTALL)
    assert match, f"docs/ics.md has no XBoard command line for {variant}"
    words = shlex.split(match.group(1).replace("\\\n", " "))
    options: list[str] = []
    skip = {"-ics": 0, "-icshost": 1, "-icsport": 1, "-icslogon": 1}
    index = 1
    while index < len(words):
        word = words[index]
        if word in skip:
            index += 1 + skip[word]
            continue
        options.append(word.strip('"'))
        index += 1
    return options
