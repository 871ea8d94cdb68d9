#!/usr/bin/env node
// The `mcp-harness` command of the npm package: runs the binary of the platform package npm
// installed beside this one (an optional dependency per OS and CPU, each declaring `os` and
// `cpu`, so npm installs only the one that fits), with this process's arguments and stdio,
// and exits as it exits. Without a matching platform package, says why and what to do.
"use strict";

const { spawnSync } = require("node:child_process");
const { constants } = require("node:os");
const { optionalDependencies = {} } = require("../package.json");

const platform = `${process.platform}-${process.arch}`;
const name = `@mcp-harness/${platform}`;

function fail(message) {
  process.stderr.write(`mcp-harness: ${message}\n`);
  process.exit(2);
}

let binary;
try {
  binary = require.resolve(`${name}/bin/mcp-harness`);
} catch {
  const supported = Object.keys(optionalDependencies)
    .map((dep) => dep.replace("@mcp-harness/", ""))
    .join(", ");
  if (!(name in optionalDependencies)) {
    fail(
      `no binary is published for this platform (${platform}); there are binaries for ` +
        `${supported || "no platform"}. Elsewhere, build it from source: ` +
        "cargo install --locked --path runner (in a checkout of the repository).",
    );
  }
  fail(
    `the platform package ${name} is not installed. npm leaves optional dependencies out ` +
      "with --omit=optional (or --no-optional) and when the lockfile was made on another " +
      `platform; reinstall with them: npm install mcp-harness ${name}`,
  );
}

const result = spawnSync(binary, process.argv.slice(2), { stdio: "inherit" });
if (result.error) {
  const hint =
    result.error.code === "ENOENT" && process.platform === "linux"
      ? " (the Linux binaries need glibc 2.17 or later; on musl, build from source)"
      : "";
  fail(`cannot run ${binary}: ${result.error.message}${hint}`);
}
if (result.signal) {
  // Die of the same signal, as a shell expects; if it does not kill, the shell's convention.
  process.kill(process.pid, result.signal);
  process.exit(128 + (constants.signals[result.signal] ?? 0));
}
process.exit(result.status ?? 1);
