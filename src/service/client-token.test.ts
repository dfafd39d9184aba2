import { describe, expect, it } from "vitest";
import {
  clientTokenInDescription,
  stripClientTokenMarker,
  withClientTokenMarker,
} from "./client-token.js";

describe("client token markers in NAS descriptions", () => {
  it("appends the marker to a description and reads the token back", () => {
    const d = withClientTokenMarker("training data", "tok-1");
    expect(d).toBe("training data [aidc-token:tok-1]");
    expect(clientTokenInDescription(d)).toBe("tok-1");
  });

  it("replaces an earlier marker instead of adding a second one", () => {
    const d = withClientTokenMarker(withClientTokenMarker("data", "old"), "new");
    expect(d).toBe("data [aidc-token:new]");
  });

  it("gives the description without the marker for people", () => {
    expect(stripClientTokenMarker("data [aidc-token:x]")).toBe("data");
    expect(withClientTokenMarker(undefined, "t")).toBe("[aidc-token:t]");
  });

  it("finds no token in a description without a marker", () => {
    expect(clientTokenInDescription("plain")).toBeUndefined();
    expect(clientTokenInDescription(undefined)).toBeUndefined();
  });
});
