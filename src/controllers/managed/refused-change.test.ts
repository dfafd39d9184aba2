import { describe, expect, it, vi } from "vitest";
import {
  ServiceNotFoundError,
  ServiceRefusedError,
  ServiceUnavailableError,
} from "../../service/errors.js";
import { sendOrFindMade } from "./refused-change.js";

const refused = new ServiceRefusedError("already mounted", { code: 409, endpoint: "mount" });
const failing = (err: Error) => () => Promise.reject(err);

describe("sendOrFindMade", () => {
  it("answers what the send answered, reading nothing", async () => {
    const find = vi.fn(async () => "m-1");
    expect(await sendOrFindMade(async () => 7, find)).toEqual({ sent: 7 });
    expect(find).not.toHaveBeenCalled();
  });

  it("after a refusal, answers the change the read again finds made", async () => {
    expect(await sendOrFindMade(failing(refused), async () => "m-1")).toEqual({ found: "m-1" });
  });

  it("keeps the refusal when the read again finds nothing made", async () => {
    await expect(sendOrFindMade(failing(refused), async () => undefined)).rejects.toBe(refused);
  });

  it("reads nothing again after a 404 or an error that is no refusal", async () => {
    const find = vi.fn(async () => "m-1");
    const gone = new ServiceNotFoundError("gone", { code: 404, endpoint: "mount" });
    const down = new ServiceUnavailableError("down", { code: 500, endpoint: "mount" });
    await expect(sendOrFindMade(failing(gone), find)).rejects.toBe(gone);
    await expect(sendOrFindMade(failing(down), find)).rejects.toBe(down);
    expect(find).not.toHaveBeenCalled();
  });
});
