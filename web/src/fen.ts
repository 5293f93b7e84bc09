// Reading the server's FEN: board rows from the top (the first player's view), files from a;
// upper case = first player. Piece tokens are a letter with an optional "+" before and "'" or
// "!" after (Dai Shogi: "+L!", "x'"); empty runs may have two digits ("15"). The hand, when the
// variant keeps one in the FEN, follows in brackets: "[Pr]" or "[-]".

export interface Piece { symbol: string; side: 0 | 1 }

export interface Position {
  files: number; ranks: number;
  /** board[rank][file], rank 0 = the first player's back rank ("1"), file 0 = "a". */
  board: (Piece | null)[][];
  hands: [Map<string, number>, Map<string, number>];
  turn: 0 | 1;
}

const TOKEN = /\+?[A-Za-z]['!]?|\d+/g;

export function parseFen(fen: string, files: number, ranks: number): Position {
  const [placementAndHand = "", turn = "w"] = fen.trim().split(/\s+/);
  const bracket = placementAndHand.indexOf("[");
  const placement = bracket < 0 ? placementAndHand : placementAndHand.slice(0, bracket);
  const handText = bracket < 0 ? "" : placementAndHand.slice(bracket + 1, placementAndHand.indexOf("]", bracket));
  const rows = placement.split("/");
  if (rows.length !== ranks) throw new Error(`FEN has ${rows.length} ranks, expected ${ranks}: ${fen}`);
  const board: (Piece | null)[][] = [];
  rows.forEach((row, i) => {
    const rank = ranks - 1 - i;
    const cells: (Piece | null)[] = [];
    for (const token of row.match(TOKEN) ?? []) {
      if (/^\d+$/.test(token)) {
        for (let k = 0; k < Number(token); k++) cells.push(null);
      } else {
        cells.push(pieceOf(token));
      }
    }
    if (cells.length !== files) throw new Error(`FEN rank ${rank + 1} has ${cells.length} squares, expected ${files}`);
    board[rank] = cells;
  });
  return { files, ranks, board, hands: parseHand(handText), turn: turn === "b" ? 1 : 0 };
}

function pieceOf(token: string): Piece {
  const letter = token.replace(/[+'!]/g, "");
  const side: 0 | 1 = letter === letter.toUpperCase() ? 0 : 1;
  return { symbol: token.toUpperCase(), side };
}

export function parseHand(text: string): [Map<string, number>, Map<string, number>] {
  const hands: [Map<string, number>, Map<string, number>] = [new Map(), new Map()];
  if (!text || text === "-") return hands;
  const re = /(\d*)([A-Za-z]['!]?)/g;
  for (const m of text.matchAll(re)) {
    const piece = pieceOf(m[2]);
    const count = m[1] ? Number(m[1]) : 1;
    const hand = hands[piece.side];
    hand.set(piece.symbol, (hand.get(piece.symbol) ?? 0) + count);
  }
  return hands;
}

export const FILE_LETTERS = "abcdefghijklmno";

/** "c4" → [file 2, rank 3]. */
export function squareXY(name: string): [number, number] {
  return [FILE_LETTERS.indexOf(name[0]), Number(name.slice(1)) - 1];
}

export function squareName(file: number, rank: number): string {
  return FILE_LETTERS[file] + String(rank + 1);
}

/** Coordinates as a player reads them: shogi files from the right, ranks a… from the top. */
export function coordLabels(family: string, files: number, ranks: number): { file: string[]; rank: string[] } {
  if (family === "shogi") {
    return {
      file: Array.from({ length: files }, (_, f) => String(files - f)),
      rank: Array.from({ length: ranks }, (_, r) => FILE_LETTERS[ranks - 1 - r]),
    };
  }
  return {
    file: Array.from({ length: files }, (_, f) => FILE_LETTERS[f]),
    rank: Array.from({ length: ranks }, (_, r) => String(r + 1)),
  };
}
