// A move the player made that the server has not confirmed yet (sent over a dead connection,
// or waiting for the reconnection): drawn as played, marked as pending, never decided here —
// the server confirms it (ack or the move event) or refuses it (an error with the reason).

import { squareXY, type Position } from "./fen";

/** The position with `uci` drawn as played (a picture only: no captures to hand, no checks). */
export function withPendingMove(pos: Position, uci: string): Position {
  if (uci === "@@@@") return pos;
  const board = pos.board.map((row) => row.slice());
  const hands: Position["hands"] = [new Map(pos.hands[0]), new Map(pos.hands[1])];
  const squares = uci.match(/[a-o](?:1[0-5]|[1-9])/g) ?? [];
  const target = squares[squares.length - 1];
  if (!target) return pos;
  const [tf, tr] = squareXY(target);
  const drop = /^([A-Za-z+]+)@/.exec(uci);
  if (drop) {
    const symbol = drop[1].toUpperCase();
    const hand = hands[pos.turn];
    hand.set(symbol, Math.max(0, (hand.get(symbol) ?? 1) - 1));
    board[tr][tf] = { symbol, side: pos.turn };
    return { ...pos, board, hands };
  }
  const [ff, fr] = squareXY(squares[0] ?? target);
  const piece = board[fr][ff];
  if (!piece) return pos;
  for (const sq of squares.slice(1, -1)) { const [f, r] = squareXY(sq); if (sq !== squares[0]) board[r][f] = null; }
  board[fr][ff] = null;
  board[tr][tf] = piece;
  return { ...pos, board, hands };
}
