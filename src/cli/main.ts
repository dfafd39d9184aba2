#!/usr/bin/env node
/**
 * The production `aidc-operator` (what the image runs, bundled by scripts/bundle-dist.ts):
 * the operator's commands only. The service emulator, the local control plane and the
 * playground are development tools of the repository (repo-main.ts); asked for here,
 * they say how to get them.
 */
import type { Command } from "commander";
import { operatorProgram, runProgram } from "./program.js";

/** The development commands, and the npm script that runs each from a checkout. */
const REPOSITORY_COMMANDS = {
  controlplane: "npm run controlplane",
  dev: "npm run dev",
  emulator: "npm run emulator",
} as const;

/** Each development command as a note that it is not part of this build. */
function registerRepositoryNotes(program: Command): void {
  for (const [name, script] of Object.entries(REPOSITORY_COMMANDS)) {
    program
      .command(name)
      .description(`not in this build: run \`${script}\` from a checkout of the repository`)
      .helpOption(false)
      .allowUnknownOption()
      .allowExcessArguments()
      .action(() => {
        throw new Error(
          `${name} is a development tool, not part of this build of aidc-operator (the image carries the operator only); run \`${script}\` from a checkout of the repository`,
        );
      });
  }
}

const program = operatorProgram();
registerRepositoryNotes(program);
runProgram(program);
