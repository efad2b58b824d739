/**
 * `npm run canary`: runs the whole suite against the newest XState 5.x, in a temporary copy of
 * this checkout, to learn before users do whether a new XState release breaks agentchart.
 * `package.json` pins XState to its minor line (`~5.33`) because agentchart reads a few XState
 * internals (src/machines/xstate-internals.ts); this is how the pin gets moved.
 *
 * Steps: copy the tracked and unignored files to a temporary folder, `npm ci`, install the
 * newest `xstate@5` without saving, run the internals test first (fast, and it names what
 * changed), then `npm test`. The folder is removed when everything passed and kept (its path
 * printed) when something failed. Needs the npm registry; not part of CI.
 *
 * `npm run canary [-- --version 5.34.0]` tries a given version instead of the newest.
 */
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const versionFlag = process.argv.indexOf("--version");
const wanted = versionFlag >= 0 ? (process.argv[versionFlag + 1] ?? "5") : "5";

function run(command: string, args: string[], cwd: string): boolean {
	console.log(`\n$ ${command} ${args.join(" ")}`);
	const result = spawnSync(command, args, { cwd, stdio: "inherit", env: { ...process.env, CI: "true" } });
	return result.status === 0;
}

const files = spawnSync("git", ["ls-files", "--cached", "--others", "--exclude-standard", "-z"], { cwd: root, encoding: "utf8" })
	.stdout.split("\0")
	.filter((file) => file.length > 0);
const copy = mkdtempSync(join(tmpdir(), "agentchart-canary-"));
for (const file of files) {
	mkdirSync(dirname(join(copy, file)), { recursive: true });
	try {
		cpSync(join(root, file), join(copy, file));
	} catch {
		// A file deleted in the working tree but still in the index.
	}
}
console.log(`canary: a copy of this checkout in ${copy}`);

const pinned = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { dependencies: Record<string, string> }).dependencies["xstate"];
const ok =
	run("npm", ["ci", "--no-audit", "--no-fund"], copy) &&
	run("npm", ["install", "--no-save", "--no-audit", "--no-fund", `xstate@${wanted}`], copy) &&
	run("node", ["-e", 'console.log("canary: xstate " + require("xstate/package.json").version + " (pinned: ' + pinned + ')")'], copy) &&
	run("npx", ["vitest", "run", "test/machine/xstate-internals.test.ts", "test/machine/interpreter"], copy) &&
	run("npm", ["test"], copy);

if (ok) {
	rmSync(copy, { recursive: true, force: true });
	console.log(`\ncanary: the suite passes on xstate@${wanted}; move the pin in package.json when it is a new minor.`);
} else {
	console.log(`\ncanary: the suite fails on xstate@${wanted}; the copy is kept in ${copy}.`);
	process.exitCode = 1;
}
