import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const ENV = { ...process.env, ANTHROPIC_API_KEY: "", FORCE_COLOR: "0" };

function runDemo(args: string[]): { status: number | null; stdout: string; stderr: string } {
	const result = spawnSync(process.execPath, ["--import", "tsx", "src/demo/main.ts", ...args], { cwd: ROOT, encoding: "utf8", env: ENV, timeout: 60_000 });
	return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe("npm start -- --prompt on the scripted model", () => {
	it("asks the given question, and the scripted reply answers that question", () => {
		const result = runDemo(["--prompt", "hello there"]);
		expect(result.stderr).toBe("");
		expect(result.status).toBe(0);
		expect(result.stdout).toContain("you  hello there");
		expect(result.stdout).toContain('You asked: "hello there"');
		expect(result.stdout).not.toContain("weather in Paris right now");
	});

	it("looks up the city the question names", () => {
		const result = runDemo(["--prompt=What is the weather in Tokyo?"]);
		expect(result.status).toBe(0);
		expect(result.stdout).toContain('get_weather({"city":"Tokyo"})');
		expect(result.stdout).toContain("Tokyo: 22 °C, clear");
	});

	it("has no data for a city named as a property every object has (it printed Object's function source)", async () => {
		const { weatherTool, clockTool } = await import("../../src/demo/tools.js");
		const weather = await weatherTool.execute("t1", { city: "constructor" });
		expect(weather.content).toEqual([{ type: "text", text: "constructor: no data" }]);
		const time = await clockTool.execute("t2", { city: "toString" });
		expect(time.content).toEqual([{ type: "text", text: "toString: 12:00" }]);
	});

	it("without --prompt, asks its own question about Paris", () => {
		const result = runDemo([]);
		expect(result.stdout).toContain("you  What's the weather in Paris right now, and what time is it there?");
		expect(result.stdout).toContain("- Paris: 14 °C, light rain");
	});
});
