/** A user's agent as the testing guide builds one for the kit (shared by the kit's probe tests). */
import { Agent, type AgentOptions } from "../../src/agent.js";
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
