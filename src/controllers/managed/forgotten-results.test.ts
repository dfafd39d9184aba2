import { describe, expect, it } from "vitest";
import { ServiceNotFoundError, ServiceUnavailableError } from "../../service/errors.js";
import { FAILED_POLLS_FOR_LOOKUP, resultAnswered, resultForgotten } from "./decisions.js";

const notFound = new ServiceNotFoundError("gone", {
  code: 404,
  endpoint: "getNasSubscriptionResult",
});
const failed = (code: number | undefined) =>
  new ServiceUnavailableError("failed", { code, endpoint: "getNasSubscriptionResult" });

describe("resultForgotten", () => {
  it("reads a 404 as forgotten at once", () => {
    expect(resultForgotten("uid-1", "k", notFound)).toBe(true);
  });

  it("reads a 5xx as forgotten only after that many polls in a row, counted per object and key", () => {
    const answers = Array.from({ length: FAILED_POLLS_FOR_LOOKUP }, () =>
      resultForgotten("uid-2", "k", failed(500)),
    );
    expect(answers).toEqual([...Array(FAILED_POLLS_FOR_LOOKUP - 1).fill(false), true]);
    expect(resultForgotten("uid-3", "k", failed(500))).toBe(false);
  });

  it("starts counting anew after an answer, a network failure or a 429", () => {
    for (const between of [
      () => resultAnswered("uid-4", "k"),
      () => resultForgotten("uid-4", "k", failed(undefined)),
      () => resultForgotten("uid-4", "k", failed(429)),
    ]) {
      for (let i = 1; i < FAILED_POLLS_FOR_LOOKUP; i++) {
        expect(resultForgotten("uid-4", "k", failed(503))).toBe(false);
      }
      between();
      expect(resultForgotten("uid-4", "k", failed(503))).toBe(false);
      resultAnswered("uid-4", "k");
    }
  });
});
