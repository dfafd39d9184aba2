import { describe, expect, it } from "vitest";
import { noteNewest } from "./newest-first.js";

describe("noteNewest", () => {
  it("makes a noted key the newest and forgets the oldest past the bound", () => {
    const memory = new Map<string, number>();
    for (const [key, value] of [
      ["a", 1],
      ["b", 2],
      ["c", 3],
    ] as const) {
      noteNewest(memory, key, value, 3);
    }
    noteNewest(memory, "a", 4, 3);
    noteNewest(memory, "d", 5, 3);
    expect([...memory]).toEqual([
      ["c", 3],
      ["a", 4],
      ["d", 5],
    ]);
  });
});
