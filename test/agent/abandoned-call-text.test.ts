/**
 * A call given up on after `abort()` (once `toolAbortGraceMs` passed; `dispose()` answers a running
 * call "Agent was disposed" at once, naming neither) is answered with what did not finish: the tool, or, when the tool had returned and its
 * `afterToolCall` hook was still being asked, the hook. The answer used to blame the tool in both
 * cases ('Tool "X" did not stop within N ms'), sending whoever read it to a tool that was done.
 */
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import type { AfterToolCallHook, ToolExecutionMode } from "../../src/types/agent.js";
import { deferred, makeTool, ok, textOf } from "../agent/helpers.js";

const GRACE = 50;

/** The tool results of a run whose one call is held by its tool or by its hook, aborted once held. */
async function givenUp(held: "tool" | "hook", mode: ToolExecutionMode): Promise<string[]> {
	const holding = deferred<void>();
	const never = new Promise<never>(() => {});
	const deploy = makeTool("deploy", async () => {
		if (held === "tool") {
			holding.resolve();
			return never;
		}
		return ok("deployed");
	});
	const afterToolCall: AfterToolCallHook = async () => {
		holding.resolve();
		// A hook that ignores the signal (it waits on a person or a slow audit log, say).
		return held === "hook" ? never : undefined;
	};
	const scripted = createScriptedModel([{ content: [toolCall("deploy", {}, "d")] }, { content: "done" }]);
	const agent = new Agent({ initialState: { model: scripted.model, tools: [deploy] }, streamFn: scripted.streamFn, toolExecution: mode, toolAbortGraceMs: GRACE, afterToolCall });
	const results: string[] = [];
	agent.subscribe((event) => {
		if (event.type === "message_end" && event.message.role === "toolResult") results.push(textOf(event.message));
	});
	const run = agent.prompt("deploy");
	await holding.promise;
	agent.abort();
	await run;
	return results;
}

describe("a call given up on after an abort", () => {
	for (const mode of ["parallel", "sequential", "streaming"] as ToolExecutionMode[]) {
		it(`held by its tool, blames the tool, also with an afterToolCall hook (${mode})`, async () => {
			expect(await givenUp("tool", mode)).toEqual([`Tool "deploy" did not stop within ${GRACE} ms after the run was aborted; its result, if it comes, is ignored`]);
		});

		it(`held by its afterToolCall hook after the tool returned, blames the hook (${mode})`, async () => {
			expect(await givenUp("hook", mode)).toEqual([`Tool "deploy" returned, but its afterToolCall hook did not finish within ${GRACE} ms after the run was aborted; the call's result, if the hook ever returns, is ignored`]);
		});
	}
});
