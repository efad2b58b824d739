/**
 * The support-ticket agent as a plain `Agent`, built by a factory the testing kit can drive:
 * `lookup_order` answers from a small table, and `refund` moves money, so it waits for a
 * person's approval. `examples/support-agent.test.ts` tests it with `agentchart/testing`
 * (`exploreAgent` and `fuzzAgent`), the way you would test yours.
 *
 * Three versions carry a mistake people make, each one the kit reports with a short path:
 * - `legacyLookupAgent`: the lookup tool wraps a callback client that calls back again on a
 *   retry, so its promise-like settles twice;
 * - `rateLimitedAgent`: a `beforeToolCall` policy that works on the first call and throws on the
 *   second (its rate-limit bucket is made lazily, and wrongly);
 * - `nudgingAgent`: a listener that calls `prompt` from `agent_end` to nudge the model, while the
 *   run is still closing.
 *
 * Run it: `npx tsx examples/support-agent.ts`.
 */
import { Type } from "typebox";
import { Agent, type AgentOptions, type AgentTool, createScriptedModel, toolCall } from "agentchart";
import type { AgentFactory } from "agentchart/testing";

const orderParams = Type.Object({ id: Type.String() });
const refundParams = Type.Object({ id: Type.String(), amount: Type.Number() });

const ORDERS: Record<string, string> = { "A-17": "packed, ships tomorrow", "B-2": "delivered on Monday" };

/** Finds an order by id. */
export const lookupOrder: AgentTool<typeof orderParams> = {
	name: "lookup_order",
	label: "Order lookup",
	description: "Finds an order by id.",
	parameters: orderParams,
	async execute(_id, { id }) {
		return { content: [{ type: "text", text: `${id}: ${ORDERS[id] ?? "no such order"}` }], details: {} };
	},
};

/** Refunds an order; a person approves each refund first. */
export const refund: AgentTool<typeof refundParams> = {
	name: "refund",
	label: "Refund",
	description: "Refunds an order.",
	parameters: refundParams,
	needsApproval: true,
	async execute(_id, { id, amount }) {
		return { content: [{ type: "text", text: `refunded ${amount} on ${id}` }], details: {} };
	},
};

/** The options of the support agent (a scripted model stands in for a real one here). */
export function supportAgentOptions(): AgentOptions {
	const model = createScriptedModel([]).model;
	return { initialState: { model, systemPrompt: "You answer questions about orders.", tools: [lookupOrder, refund] } };
}

/** The factory the kit drives: a new agent, or one restored from the kit's snapshot. */
export const supportAgent: AgentFactory = (kit) => {
	const options = kit.options(supportAgentOptions());
	return kit.snapshot ? Agent.restore(kit.snapshot, options) : new Agent(options);
};

/** A client from before promises: it calls back once, and again when its retry succeeds. */
function legacyOrderClient(id: string, callback: (row: string) => void): void {
	callback(ORDERS[id] ?? "no such order");
	setTimeout(() => callback(ORDERS[id] ?? "no such order"), 1);
}

/** Mistake 1: the lookup returns a promise-like over the legacy client, which settles twice. */
export const legacyLookupAgent: AgentFactory = (kit) => {
	const legacyLookup: AgentTool<typeof orderParams> = {
		...lookupOrder,
		execute: (_id, { id }) =>
			({
				then(resolve: (value: { content: { type: "text"; text: string }[]; details: object }) => void) {
					legacyOrderClient(id, (row) => resolve({ content: [{ type: "text", text: `${id}: ${row}` }], details: {} }));
				},
			}) as unknown as Promise<{ content: { type: "text"; text: string }[]; details: object }>,
	};
	const options = kit.options({ ...supportAgentOptions(), initialState: { ...supportAgentOptions().initialState, tools: [legacyLookup] } });
	return kit.snapshot ? Agent.restore(kit.snapshot, options) : new Agent(options);
};

/** Mistake 2: a policy hook whose rate-limit bucket is made on the first call and misread on the second. */
export const rateLimitedAgent: AgentFactory = (kit) => {
	let bucket: { tokens: number } | undefined;
	const options = kit.options({
		...supportAgentOptions(),
		initialState: { ...supportAgentOptions().initialState, tools: [lookupOrder] },
		beforeToolCall: async () => {
			if (!bucket) {
				bucket = { tokens: 1 };
				return undefined;
			}
			// The bug: `tokens` was meant to refill, and is read as if it had.
			if (bucket.tokens-- === 1) throw new Error("rate limiter: bucket empty");
			return undefined;
		},
	});
	return kit.snapshot ? Agent.restore(kit.snapshot, options) : new Agent(options);
};

/** Mistake 3: a listener that nudges the model with a new prompt from `agent_end`. */
export const nudgingAgent: AgentFactory = (kit) => {
	const options = kit.options({ ...supportAgentOptions(), initialState: { ...supportAgentOptions().initialState, tools: [lookupOrder] } });
	const agent = kit.snapshot ? Agent.restore(kit.snapshot, options) : new Agent(options);
	let nudged = false;
	agent.subscribe((event) => {
		if (event.type !== "agent_end" || nudged) return;
		nudged = true;
		// The bug: the run is still closing here; the promise is not awaited, so its rejection goes nowhere.
		void agent.prompt("Anything else I can help with?");
	});
	return agent;
};

async function demo(): Promise<void> {
	const scripted = createScriptedModel([{ content: [toolCall("lookup_order", { id: "A-17" })] }, { content: "Order A-17 ships tomorrow." }]);
	const agent = new Agent({ ...supportAgentOptions(), streamFn: scripted.streamFn });
	await agent.prompt("Where is my order A-17?");
	const last = agent.state.messages.at(-1);
	console.log(last?.role === "assistant" ? last.content.map((block) => (block.type === "text" ? block.text : "")).join("") : "");
}

if (import.meta.url === `file://${process.argv[1]}`) void demo();
