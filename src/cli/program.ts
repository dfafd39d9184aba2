import { Command } from "commander";
import { registerCrdsCommand } from "./crds.js";
import { registerRunCommand } from "./run.js";
import { registerUninstallCheckCommand } from "./uninstall-check.js";

/**
 * The `aidc-operator` program with the commands every build has: `run` (the image's
 * command), `crds` and `uninstall-check`. Each subcommand registers itself from its own
 * file; main.ts adds notes for the development commands, repo-main.ts the commands.
 */
export function operatorProgram(): Command {
  const program = new Command("aidc-operator")
    .description("Kubernetes operator for the Compute and Storage Service")
    // Its errors (an unknown option, a missing value) as the program's own: one
    // `aidc-operator: ...` line. Commands registered below inherit it.
    .configureOutput({
      outputError: (message, write) => write(message.replace(/^error: /, "aidc-operator: ")),
    });
  registerCrdsCommand(program);
  registerRunCommand(program);
  registerUninstallCheckCommand(program);
  return program;
}

/**
 * Runs `program` on the process's arguments; an error is one line on stderr and exit code 1.
 * A reader that closes stdout early (`aidc-operator crds | head`) ends the process quietly,
 * as a closed pipe ends a Go program, instead of an unhandled EPIPE.
 */
export function runProgram(program: Command): void {
  process.stdout.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code !== "EPIPE") throw err;
    process.exit(0);
  });
  program.parseAsync(process.argv).catch((err: unknown) => {
    process.stderr.write(`aidc-operator: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}
