// @ts-nocheck
import { Type } from "typebox";
import { createActor, toPromise } from "xstate";
import { describe, expect, it } from "vitest";
import { supportTicketMachine } from "../../examples/support-ticket.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import type { AgentTool } from "../../src/types/agent.js";
import type { Context } from "../../src/types/model.js";

const orderParams = Type.Object({ id: Type.String() });
function lookupTool(delayMs: number): AgentTool<typeof orderParams> {
	return {
		name: "lookup_order",
		label: "Order lookup",
		description: "Finds an order.",
		parameters: orderParams,
		execute: async (_id, { id }) => {
			await new Promise((resolve) => setTimeout(resolve, delayMs));
			return { content: [{ type: "text", text: `${id}: ships tomorrow` }], details: {} };
		},
	};
}

function texts(context: Context | undefined): string {
	return JSON.stringify(context?.messages ?? []);
}

describe("a support ticket with an embedded agent", () => {
	it("prompts the agent and resolves the ticket with its answer when the run completes", async () => {
		const scripted = createScriptedModel([{ content: [toolCall("lookup_order", { id: "A-17" })] }, { content: "Order A-17 ships tomorrow." }]);
		const ticket = createActor(supportTicketMachine, {
			input: { agent: { model: scripted.model, tools: [lookupTool(5)], config: { streamFn: scripted.streamFn } }, timeoutMs: 5000 },
		}).start();
		ticket.send({ type: "ticket.opened", question: "Where is my order A-17?" });
		expect(ticket.getSnapshot().value).toEqual({ open: "answering" });

		const output = await toPromise(ticket);
		expect(output).toEqual({ outcome: "resolved", answer: "Order A-17 ships tomorrow.", toolsUsed: ["lookup_order"], steered: 0 });
		expect(texts(scripted.calls[0])).toContain("Where is my order A-17?");
		// Leaving `open` stopped the agent child.
		expect(ticket.getSnapshot().children["agent"]).toBeUndefined();
	});

	it("steers the agent when the customer replies while it works", async () => {
		const scripted = createScriptedModel([{ content: [toolCall("lookup_order", { id: "A-17" })] }, { content: "Sent to the new address." }]);
		const ticket = createActor(supportTicketMachine, {
			input: { agent: { model: scripted.model, tools: [lookupTool(80)], config: { streamFn: scripted.streamFn } }, timeoutMs: 5000 },
		}).start();
		ticket.send({ type: "ticket.opened", question: "Where is my order A-17?" });
		await new Promise((resolve) => setTimeout(resolve, 30));
		ticket.send({ type: "customer.replied", text: "Please ship it to 5 Rue Neuve instead." });

		const output = await toPromise(ticket);
		expect(output.outcome).toBe("resolved");
		expect(output.steered).toBe(1);
		// The steering message reached the model on the call after the tool results.
		expect(texts(scripted.calls[0])).not.toContain("5 Rue Neuve");
		expect(texts(scripted.calls[1])).toContain("5 Rue Neuve");
	});

	it("aborts the agent on the ticket's timeout and closes with what it had", async () => {
		const scripted = createScriptedModel([{ content: "Let me think about this very carefully, step by step, ".repeat(20) }], { chunkSize: 2, delayMs: 10 });
		const ticket = createActor(supportTicketMachine, {
			input: { agent: { model: scripted.model, config: { streamFn: scripted.streamFn } }, timeoutMs: 60 },
		}).start();
		ticket.send({ type: "ticket.opened", question: "Why is the sky blue?" });
		const started = Date.now();

		const output = await toPromise(ticket);
		expect(output.outcome).toBe("timed-out");
		expect(output.answer.length).toBeGreaterThan(0);
		expect(output.answer.length).toBeLessThan(200);
		expect(Date.now() - started).toBeLessThan(2000);
		expect(scripted.calls).toHaveLength(1);
	});
});
