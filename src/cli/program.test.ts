import { describe, expect, it } from "vitest";
import { operatorProgram } from "./program.js";

describe("the aidc-operator program", () => {
  it("says what it refuses on the command line in one `aidc-operator: ...` line, as its other start errors", async () => {
    const program = operatorProgram();
    const written: string[] = [];
    for (const command of [program, ...program.commands]) {
      command.exitOverride().configureOutput({ writeErr: (s) => written.push(s) });
    }
    const refused = async (...args: string[]) => {
      written.length = 0;
      await expect(program.parseAsync(["node", "aidc-operator", ...args])).rejects.toThrow();
      return written.join("");
    };
    expect(await refused("run", "--bogus-flag")).toBe(
      "aidc-operator: unknown option '--bogus-flag'\n",
    );
    expect(await refused("bogus")).toBe("aidc-operator: unknown command 'bogus'\n");
    expect(await refused("run", "--log-level")).toBe(
      "aidc-operator: option '--log-level <value>' argument missing\n",
    );
  });
});
