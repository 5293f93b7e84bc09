// A big board on a small screen (Dai Shogi on a phone): the zoom to squares of at least 44 px, in
// a box panned with a finger (tap-tap moves).

/** Whether the board in `box`, `files` squares wide, offers the zoom: a big board whose squares
 * are under 40 px (or one zoomed already). */
export function zoomable(box: HTMLElement, files: number): boolean {
  return files >= 12 && (box.classList.contains("zoomed") || box.clientWidth / (files + 0.68) < 40);
}

/** Zoom the board in `box` in or out, centred on the last move. Returns whether it is now zoomed. */
export function toggleZoom(box: HTMLElement): boolean {
  const zoomed = box.classList.toggle("zoomed");
  const focus = box.querySelector("rect.last") ?? box.querySelector("rect.sq");
  if (zoomed && focus) {
    const outer = box.getBoundingClientRect();
    const r = focus.getBoundingClientRect();
    box.scrollLeft += r.left - outer.left - outer.width / 2 + r.width / 2;
    box.scrollTop += r.top - outer.top - outer.height / 2 + r.height / 2;
  }
  return zoomed;
}
