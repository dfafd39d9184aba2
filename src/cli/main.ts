#!/usr/bin/env node
import { Command } from "commander";
import { registerControlPlaneCommand } from "./controlplane.js";
import { registerCrdsCommand } from "./crds.js";
import { registerDevCommand } from "./dev-command.js";
import { registerEmulatorCommand } from "./emulator.js";
import { registerRunCommand } from "./run.js";
import { registerUninstallCheckCommand } from "./uninstall-check.js";

/** The `aidc-operator` command line: each subcommand registers itself from its own file. */
const program = new Command("aidc-operator").description(
  "Kubernetes operator for the Compute and Storage Service",
);
registerControlPlaneCommand(program);
registerCrdsCommand(program);
registerDevCommand(program);
registerEmulatorCommand(program);
registerRunCommand(program);
registerUninstallCheckCommand(program);

program.parseAsync(process.argv).catch((err: unknown) => {
  process.stderr.write(`aidc-operator: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
