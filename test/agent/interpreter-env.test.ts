import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

// AGENTCHART_INTERPRETER is read once per process, at the first Agent: each case is a process.
function logicOfANewAgent(value: string | undefined): string {
	const script = [
		'import { Agent } from "./src/agent.ts";',
		'import { agentLogic } from "./src/machines/agent-logic.ts";',
		'import { agentMachine } from "./src/machines/agent-machine.ts";',
		"const logic = new Agent().actor.logic;",
		'console.log(logic === agentMachine ? "xstate" : logic === agentLogic ? "agentchart" : "other");',
	].join("\n");
	const env = { ...process.env };
	delete env["AGENTCHART_INTERPRETER"];
	if (value !== undefined) env["AGENTCHART_INTERPRETER"] = value;
	const result = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { cwd: ROOT, encoding: "utf8", env, timeout: 60_000 });
	expect(result.stderr).toBe("");
	return result.stdout.trim();
}

describe("AGENTCHART_INTERPRETER", () => {
	it("=xstate makes XState's interpreter the default; unset or anything else leaves agentchart's", () => {
		expect(logicOfANewAgent("xstate")).toBe("xstate");
		expect(logicOfANewAgent(undefined)).toBe("agentchart");
		expect(logicOfANewAgent("lean")).toBe("agentchart");
	});
});
