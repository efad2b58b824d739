/**
 * The stream function of an agent given none: pi-ai's `streamSimple` (its provider registry)
 * when `@mariozechner/pi-ai` is installed, as in pi; a clear error reply otherwise. pi's own
 * end-to-end tests register pi-ai's faux provider and rely on this.
 */
import { Agent as PiAgent } from "@mariozechner/pi-agent-core";
import { fauxAssistantMessage, fauxText, fauxToolCall, registerFauxProvider } from "@mariozechner/pi-ai";
import { afterEach, describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { agentLoop } from "../../src/loop/agent-loop.js";
import { createDefaultStreamFn, defaultModel } from "../../src/machines/defaults.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import type { AgentMessage, AssistantMessage } from "../../src/types/messages.js";
import type { Model } from "../../src/types/model.js";
import { describeEvent, echoTool, textOf, user } from "./helpers.js";

const registrations: { unregister(): void }[] = [];
afterEach(() => {
	for (const registration of registrations.splice(0)) registration.unregister();
});

function faux(responses: Parameters<ReturnType<typeof registerFauxProvider>["setResponses"]>[0]) {
	const registration = registerFauxProvider({ tokenSize: { min: 3, max: 3 } });
	registration.setResponses(responses);
	registrations.push(registration);
	return registration;
}

describe("an Agent without streamFn", () => {
	it("streams through pi-ai's provider registry, with the same events as pi's Agent", async () => {
		const run = async (impl: "pi" | "agentchart") => {
			const registration = faux([fauxAssistantMessage([fauxText("Checking."), fauxToolCall("echo", { value: "x" }, { id: "c1" })]), fauxAssistantMessage("Done.")]);
			const options = { initialState: { model: registration.getModel(), tools: [echoTool()] } };
			const agent = impl === "pi" ? new PiAgent(options as never) : new Agent(options as never);
			const lines: string[] = [];
			agent.subscribe((event) => {
				lines.push(describeEvent(event, true));
			});
			await agent.prompt("go");
			return { lines, last: textOf(agent.state.messages.at(-1)), calls: registration.state.callCount };
		};
		const expected = await run("pi");
		expect(expected.last).toBe("Done.");
		expect(expected.calls).toBe(2);
		expect(await run("agentchart")).toEqual(expected);
	});

	it("is also the default of the loop API", async () => {
		const registration = faux([fauxAssistantMessage("from pi-ai")]);
		const stream = agentLoop([user("hi")], { systemPrompt: "", messages: [], tools: [] }, { model: registration.getModel() as Model, convertToLlm: (m) => m as never });
		for await (const _event of stream) {
			// drain
		}
		const messages: AgentMessage[] = await stream.result();
		expect(textOf(messages.at(-1))).toBe("from pi-ai");
	});

	it("ends with pi-ai's own error for a model no provider serves", async () => {
		const agent = new Agent({ initialState: { model: defaultModel() } });
		await agent.prompt("hi");
		const last = agent.state.messages.at(-1) as AssistantMessage;
		expect(last.stopReason).toBe("error");
		expect(last.errorMessage).toMatch(/unknown/);
	});
});

describe("createDefaultStreamFn without pi-ai", () => {
	it("answers every call with an error reply that says what to pass, trying to load it again at each", async () => {
		let loads = 0;
		const streamFn = createDefaultStreamFn(async () => {
			loads++;
			throw Object.assign(new Error("Cannot find package '@mariozechner/pi-ai' imported from /app/node_modules/agentchart/dist/machines/defaults.js"), { code: "ERR_MODULE_NOT_FOUND" });
		});
		const agent = new Agent({ initialState: { model: defaultModel() }, streamFn });
		await agent.prompt("hi");
		await agent.prompt("again");
		const replies = agent.state.messages.filter((m): m is AssistantMessage => m.role === "assistant");
		expect(replies).toHaveLength(2);
		for (const reply of replies) {
			expect(reply.stopReason).toBe("error");
			expect(reply.errorMessage).toContain("pass streamFn");
			expect(reply.errorMessage).toContain("install @mariozechner/pi-ai to use its providers (`npm install @mariozechner/pi-ai@^0.73.1`)");
		}
		expect(loads).toBe(2);
	});

	// Found by reading optional-peer.ts's JSDoc against the code (2026-12-06): the failed load was
	// kept for the life of the process, so installing pi-ai as the reply says changed nothing until
	// a restart, unlike the other optional SDKs, whose failed loads are dropped.
	it("loads pi-ai at the next call once it is installed, without a restart", async () => {
		let installed = false;
		const scripted = createScriptedModel([{ content: "from pi-ai" }]);
		const streamFn = createDefaultStreamFn(async () => {
			if (!installed) throw Object.assign(new Error("Cannot find package '@mariozechner/pi-ai'"), { code: "ERR_MODULE_NOT_FOUND" });
			return { streamSimple: scripted.streamFn };
		});
		const agent = new Agent({ initialState: { model: defaultModel() }, streamFn });
		await agent.prompt("hi");
		expect((agent.state.messages.at(-1) as AssistantMessage).stopReason).toBe("error");
		installed = true;
		await agent.prompt("again");
		expect(agent.state.messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "stop", content: [{ type: "text", text: "from pi-ai" }] });
	});

	it("says that an installed pi-ai without streamSimple (another version) cannot be used, rather than to install it", async () => {
		const streamFn = createDefaultStreamFn(async () => ({}) as never);
		const agent = new Agent({ initialState: { model: defaultModel() }, streamFn });
		await agent.prompt("hi");
		const message = (agent.state.messages.at(-1) as AssistantMessage).errorMessage;
		expect(message).toContain("pass streamFn");
		expect(message).toContain('cannot use the installed "@mariozechner/pi-ai" package: it has no streamSimple');
		expect(message).toContain("agentchart needs @mariozechner/pi-ai@^0.73.1");
	});
});
