// The move list's rows. Chess-family lists number full moves as every chess site does
// ("1. Na3 a6 2. Nb3 a5"; a game whose first move is Black's starts "1. … e5"); shogi lists
// number every move ("1. P-7f 2. P-3d"), as shogi records do.

export interface MoveCell { ply: number; text: string }
export interface MoveRow { number: number; cells: (MoveCell | null)[] }

export function moveRows(displays: string[], family: "shogi" | "chess", secondMovesFirst = false): MoveRow[] {
  const cells = displays.map((text, i) => ({ ply: i + 1, text }));
  if (family === "shogi") return cells.map((c) => ({ number: c.ply, cells: [c] }));
  const padded: (MoveCell | null)[] = secondMovesFirst ? [null, ...cells] : cells;
  const rows: MoveRow[] = [];
  // A leading gap (Black moved first) reads "1. … e5"; the last row may hold one move only.
  for (let i = 0; i < padded.length; i += 2) rows.push({ number: i / 2 + 1, cells: padded.slice(i, i + 2) });
  return rows;
}
