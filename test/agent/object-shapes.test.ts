/**
 * The chart's state is immutable: every step copies the context, and the actions copy the run,
 * the tool batch and its call entries. Those copies stay on V8's fast path only while each kind
 * of object has one hidden class (see `ChartLogicOptions.copyContext`); a second place that
 * builds a run or a call entry its own way (a spread, another literal) gives that kind a second
 * class, and enough of them make every copy a call into V8's runtime (0.3-0.5 µs instead of
 * 0.05). V8 only tells with `--allow-natives-syntax`, so the run happens in a child process.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const FIXTURE = fileURLToPath(new URL("./fixtures/object-shapes.ts", import.meta.url));
const ROOT = fileURLToPath(new URL("../..", import.meta.url));

function countShapes(): Promise<{ context: number; run: number; batch: number; call: number; counted: number }> {
	return new Promise((resolve, reject) => {
		execFile(process.execPath, ["--allow-natives-syntax", "--import", "tsx", FIXTURE], { cwd: ROOT, encoding: "utf8" }, (error, stdout, stderr) => {
			if (error) reject(new Error(`${error.message}\n${stderr}`));
			else resolve(JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}"));
		});
	});
}

describe("object shapes of the chart's state", () => {
	it("gives every context, run, tool batch and call entry of a run one hidden class per kind", async () => {
		const shapes = await countShapes();
		// Steps of three prompts with two tool calls each were counted.
		expect(shapes.counted).toBeGreaterThan(20);
		expect(shapes).toMatchObject({ context: 1, run: 1, batch: 1, call: 1 });
	}, 60_000);
});
