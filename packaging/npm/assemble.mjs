#!/usr/bin/env node
// Writes the npm packages of mcp-harness into a directory, ready for `npm pack` or
// `npm publish`, each at the version of the workspace's Cargo.toml:
//
//   node packaging/npm/assemble.mjs platform <rust-target> <binary> <out-dir>
//     the platform package for one target: @mcp-harness/<os>-<cpu>, with `os`, `cpu` (and
//     `libc` on Linux) so that npm installs it only where it runs, and the binary as
//     bin/mcp-harness;
//   node packaging/npm/assemble.mjs main <out-dir>
//     the `mcp-harness` package: the launcher (mcp-harness/bin/mcp-harness.js) and every
//     platform package of TARGETS as an optional dependency at the same version;
//   node packaging/npm/assemble.mjs version
//     prints that version (the release workflow checks the tag against it).
//
// Used by the release workflow (.github/workflows/release.yml) and by .ci/packages.
import { chmodSync, copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..", "..");

/** The Rust targets released, and the platform each is on npm (Node's names). */
const TARGETS = {
  "x86_64-unknown-linux-gnu": { os: "linux", cpu: "x64", libc: "glibc" },
  "aarch64-unknown-linux-gnu": { os: "linux", cpu: "arm64", libc: "glibc" },
};

function die(message) {
  process.stderr.write(`assemble.mjs: ${message}\n`);
  process.exit(2);
}

/** The `version` of `[workspace.package]` in the root Cargo.toml. */
function cargoVersion() {
  const path = join(root, "Cargo.toml");
  const text = readFileSync(path, "utf8");
  const section = text.split(/^\[workspace\.package\]$/m)[1]?.split(/^\[/m)[0] ?? "";
  const version = section.match(/^version\s*=\s*"([^"]+)"/m)?.[1];
  if (!version) die(`${path}: no version in [workspace.package]`);
  return version;
}

function platformName({ os, cpu }) {
  return `@mcp-harness/${os}-${cpu}`;
}

function writeJson(path, value) {
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
}

function platform(target, binary, out) {
  const spec = TARGETS[target];
  if (!spec) die(`unknown target ${target}; known: ${Object.keys(TARGETS).join(", ")}`);
  const name = platformName(spec);
  mkdirSync(join(out, "bin"), { recursive: true });
  const manifest = {
    name,
    version: cargoVersion(),
    description: `The mcp-harness binary for ${spec.os} ${spec.cpu} (installed by the mcp-harness package).`,
    license: "Apache-2.0",
    os: [spec.os],
    cpu: [spec.cpu],
    ...(spec.libc ? { libc: [spec.libc] } : {}),
    files: ["bin/mcp-harness"],
    preferUnplugged: true,
  };
  writeJson(join(out, "package.json"), manifest);
  writeFileSync(join(out, "README.md"), `# ${name}\n\n${manifest.description}\n`);
  copyFileSync(binary, join(out, "bin", "mcp-harness"));
  chmodSync(join(out, "bin", "mcp-harness"), 0o755);
  console.log(`${out}: ${name}@${manifest.version}`);
}

function main(out) {
  const source = join(here, "mcp-harness");
  const manifest = JSON.parse(readFileSync(join(source, "package.json"), "utf8"));
  manifest.version = cargoVersion();
  manifest.optionalDependencies = Object.fromEntries(
    Object.values(TARGETS).map((spec) => [platformName(spec), manifest.version]),
  );
  mkdirSync(join(out, "bin"), { recursive: true });
  writeJson(join(out, "package.json"), manifest);
  copyFileSync(join(here, "README.md"), join(out, "README.md"));
  copyFileSync(join(source, "bin", "mcp-harness.js"), join(out, "bin", "mcp-harness.js"));
  chmodSync(join(out, "bin", "mcp-harness.js"), 0o755);
  console.log(`${out}: ${manifest.name}@${manifest.version}`);
}

const [command, ...args] = process.argv.slice(2);
if (command === "platform" && args.length === 3) {
  platform(...args);
} else if (command === "main" && args.length === 1) {
  main(...args);
} else if (command === "version" && args.length === 0) {
  console.log(cargoVersion());
} else {
  die("usage: assemble.mjs platform <rust-target> <binary> <out-dir> | main <out-dir> | version");
}
