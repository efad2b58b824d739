// @ts-nocheck
function stryNS_9fa48() {
  var g = typeof globalThis === 'object' && globalThis && globalThis.Math === Math && globalThis || new Function("return this")();
  var ns = g.__stryker__ || (g.__stryker__ = {});
  if (ns.activeMutant === undefined && g.process && g.process.env && g.process.env.__STRYKER_ACTIVE_MUTANT__) {
    ns.activeMutant = g.process.env.__STRYKER_ACTIVE_MUTANT__;
  }
  function retrieveNS() {
    return ns;
  }
  stryNS_9fa48 = retrieveNS;
  return retrieveNS();
}
stryNS_9fa48();
function stryCov_9fa48() {
  var ns = stryNS_9fa48();
  var cov = ns.mutantCoverage || (ns.mutantCoverage = {
    static: {},
    perTest: {}
  });
  function cover() {
    var c = cov.static;
    if (ns.currentTestId) {
      c = cov.perTest[ns.currentTestId] = cov.perTest[ns.currentTestId] || {};
    }
    var a = arguments;
    for (var i = 0; i < a.length; i++) {
      c[a[i]] = (c[a[i]] || 0) + 1;
    }
  }
  stryCov_9fa48 = cover;
  cover.apply(null, arguments);
}
function stryMutAct_9fa48(id) {
  var ns = stryNS_9fa48();
  function isActive(id) {
    if (ns.activeMutant === id) {
      if (ns.hitCount !== void 0 && ++ns.hitCount > ns.hitLimit) {
        throw new Error('Stryker: Hit count limit reached (' + ns.hitCount + ')');
      }
      return true;
    }
    return false;
  }
  stryMutAct_9fa48 = isActive;
  return isActive(id);
}
import { assertTranscript } from "../agent-input.js";
import { assertValidTools } from "../tools/tool-schema.js";
import type { AgentState, AgentThinkingLevel, AnyAgentTool } from "../types/agent.js";
import type { AgentMessage } from "../types/messages.js";
import type { Model } from "../types/model.js";

/**
 * The object `agent.state` returns (always the same one, as pi's): the agent's data when it is
 * idle, and its mirror of the run while one is in progress. `tools` and `messages` are checked
 * and copied on assignment; the runtime fields are written by the agent only.
 */
export class MutableAgentState implements AgentState {
  systemPrompt: string;
  model: Model;
  thinkingLevel: AgentThinkingLevel;
  isStreaming = stryMutAct_9fa48("0") ? true : (stryCov_9fa48("0"), false);
  streamingMessage: AgentMessage | undefined = undefined;
  pendingToolCalls: ReadonlySet<string> = EMPTY;
  errorMessage: string | undefined = undefined;
  #tools: AnyAgentTool[];
  #messages: AgentMessage[];
  constructor(systemPrompt: string, model: Model, thinkingLevel: AgentThinkingLevel, tools: AnyAgentTool[], messages: AgentMessage[]) {
    if (stryMutAct_9fa48("1")) {
      {}
    } else {
      stryCov_9fa48("1");
      this.systemPrompt = systemPrompt;
      this.model = model;
      this.thinkingLevel = thinkingLevel;
      this.#tools = tools;
      this.#messages = messages;
    }
  }
  get tools(): AnyAgentTool[] {
    if (stryMutAct_9fa48("2")) {
      {}
    } else {
      stryCov_9fa48("2");
      return this.#tools;
    }
  }
  set tools(value: AnyAgentTool[]) {
    if (stryMutAct_9fa48("3")) {
      {}
    } else {
      stryCov_9fa48("3");
      assertValidTools(value);
      this.#tools = stryMutAct_9fa48("4") ? [] : (stryCov_9fa48("4"), [...value]);
    }
  }
  get messages(): AgentMessage[] {
    if (stryMutAct_9fa48("5")) {
      {}
    } else {
      stryCov_9fa48("5");
      return this.#messages;
    }
  }
  set messages(value: AgentMessage[]) {
    if (stryMutAct_9fa48("6")) {
      {}
    } else {
      stryCov_9fa48("6");
      assertTranscript(value, stryMutAct_9fa48("7") ? "" : (stryCov_9fa48("7"), "state.messages"));
      this.#messages = stryMutAct_9fa48("8") ? [] : (stryCov_9fa48("8"), [...value]);
    }
  }

  /** The run ended: nothing streams, no tool call is pending. */
  settle(): void {
    if (stryMutAct_9fa48("9")) {
      {}
    } else {
      stryCov_9fa48("9");
      this.isStreaming = stryMutAct_9fa48("10") ? true : (stryCov_9fa48("10"), false);
      this.streamingMessage = undefined;
      this.pendingToolCalls = EMPTY;
    }
  }
}

/** Shared by idle agents: a new set is made only when a tool call starts. */
const EMPTY: ReadonlySet<string> = new Set<string>();