import { describe, expect, it } from "vitest";

// Vite's import.meta.glob (typed here: the project's tsconfig loads no ambient types).
declare global {
  interface ImportMeta {
    glob(pattern: string, options: { query: "?raw"; import: "default"; eager: true }): Record<string, string>;
  }
}

const SOURCES = import.meta.glob("../src/**/*.ts", { query: "?raw", import: "default", eager: true });

/** Spellings of TypeScript's `any` as a type: what the server's payloads are typed instead
 * (protocol.gen.ts, generated from server/hub/payloads.py and its siblings). */
const ANY = [/:\s*any\b/, /\bas\s+any\b/, /<any\b/, /\bany\s*\[\]/, /\bany\s*[|&]/, /[|&]\s*any\b/];

describe("the client's types", () => {
  it("reads every source file", () => {
    expect(Object.keys(SOURCES)).toContain("../src/net.ts");
    expect(Object.keys(SOURCES)).toContain("../src/protocol.gen.ts");
  });

  it("never spells `any`", () => {
    const found = Object.entries(SOURCES).flatMap(([file, text]) =>
      text.split("\n").flatMap((line, i) => (ANY.some((re) => re.test(line)) ? [`${file}:${i + 1}: ${line.trim()}`] : [])));
    expect(found).toEqual([]);
  });

  it("would catch one", () => {
    expect(ANY.some((re) => re.test("export interface Message { d: any }"))).toBe(true);
    expect(ANY.some((re) => re.test("const x = y as any;"))).toBe(true);
    expect(ANY.some((re) => re.test("// the move, if any: drawn"))).toBe(false);
  });
});
