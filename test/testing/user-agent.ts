/** A user's agent as the testing guide builds one for the kit (shared by the kit's probe tests). */
import { Type } from "typebox";
import { Agent, type AgentOptions } from "../../src/agent.js";
import type { AgentTool } from "../../src/types/agent.js";
import type { AgentFactory } from "../../src/testing/walk/cast.js";

/**
 * The guide's factory; `self` gives the agent to listeners that use it.
 *
 * @example
 * const make = factory((self) => ({ initialState: { model, tools }, listeners: [() => self().steer(message)] }));
 */
export function factory(make: (self: () => Agent) => AgentOptions): AgentFactory {
	return (kit) => {
		let agent: Agent | undefined;
		const options = kit.options(make(() => agent as Agent));
		agent = kit.snapshot ? Agent.restore(kit.snapshot, options) : new Agent(options);
		return agent;
	};
}

const orderId = Type.Object({ id: Type.String() });

/** A tool result of one text block. */
export const ok = (text: string) => ({ content: [{ type: "text" as const, text }], details: {} });

/**
 * The guide's order lookup tool, answering `execute` (by default, at once: "ships tomorrow").
 *
 * @example
 * const tools = [lookup(async () => { throw new TypeError("x is undefined"); })];
 */
export function lookup(execute: AgentTool<typeof orderId>["execute"] = async () => ok("ships tomorrow")): AgentTool<typeof orderId> {
	return { name: "lookup_order", label: "Order lookup", description: "Finds an order by id.", parameters: orderId, execute };
}

/** The kit's options that print nothing. */
export const quiet = { log: () => undefined };
