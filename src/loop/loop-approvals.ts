/**
 * What the loop API answers a tool call that asks for a person's approval. Its own module: the
 * package's main entry exports it, and its declarations must not reach XState's (which need
 * `skipLibCheck`).
 */

/**
 * Why the loop API rejects a tool call that asks for a person's approval (`needsApproval`, or
 * `beforeToolCall` answering `{ approval: "required" }`): it has no `approve()` to wait for. The
 * model gets it as the call's error result.
 *
 * @example
 * if (event.type === "approval_resolved" && event.reason === LOOP_API_REJECTS_APPROVALS) console.warn("use an Agent for tools that need approval");
 */
export const LOOP_API_REJECTS_APPROVALS = "This tool call needs a person's approval, which the loop API (agentLoop) cannot ask for: it was not run";
