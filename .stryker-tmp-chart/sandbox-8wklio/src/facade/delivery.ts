/**
 * Delivering events to an Agent's listeners the way pi 0.73.1 does, microtask for microtask:
 * each event is reduced into the agent's state, then every listener is awaited in turn
 * (`await listener(event, signal)`, even one that returns nothing). The next event waits for
 * the previous one. Code written against pi (pi's coding agent forwards events through a
 * promise chain of its own) depends on that timing, so it is kept exactly; what is faster here
 * is everything around it.
 *
 * Events arrive synchronously from the machine (and token deltas from the stream actor); the
 * first one finding the queue idle is delivered at once, so a listener runs in the same tick
 * as the event, as in pi. Steps that are not events (acknowledging a delivery barrier,
 * replacing the transcript after a compaction) queue behind the events before them.
 */
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
import type { AgentEvent } from "../types/agent.js";
import { describeError } from "../util/describe-error.js";

/** A subscriber: awaited, in subscription order, for every event. */
export type AgentListener = (event: AgentEvent, signal: AbortSignal) => Promise<void> | void;

/** What the delivery needs from its agent. */
export interface DeliveryHost {
  /** The state updates of one event, before its listeners (pi's order). */
  reduce(event: AgentEvent): void;
  /** A listener threw or rejected. */
  listenerFailed(message: string): void;
  /**
   * An event that ends something (`agent_end`, `auto_compaction_end`) is being delivered:
   * `delivery` settles once it has reached every listener.
   */
  delivered(event: AgentEvent, delivery: Promise<void>): void;
}

/** The ordered delivery of one agent's events to its listeners. */
export class ListenerDelivery {
  /** Live, as pi's: a listener removed during delivery is skipped, one added joins the current event. */
  readonly listeners = new Set<AgentListener>();
  /** The signal listeners receive: the run's, set by the agent as its run starts and ends. */
  signal: AbortSignal;
  /** Steps queued or running. */
  #inFlight = 0;
  /** The last step's promise: what the next step waits for. */
  #tail: Promise<void> | undefined;
  constructor(private readonly host: DeliveryHost, signal: AbortSignal, /** Where a token delta's one state update goes (the rest is the host's `reduce`). */
  private readonly state: {
    streamingMessage: unknown;
  }) {
    if (stryMutAct_9fa48("11")) {
      {}
    } else {
      stryCov_9fa48("11");
      this.signal = signal;
    }
  }

  /**
   * Queues an event; delivered at once when nothing is in flight. Returns what
   * {@link ListenerDelivery.pending} would return right after.
   *
   * @example
   * delivery.event({ type: "agent_start" });
   */
  event(event: AgentEvent): Promise<void> | undefined {
    if (stryMutAct_9fa48("12")) {
      {}
    } else {
      stryCov_9fa48("12");
      // Nothing in flight (every token delta, when listeners keep up): delivered now, no step queued.
      if (stryMutAct_9fa48("15") ? this.#inFlight !== 0 : stryMutAct_9fa48("14") ? false : stryMutAct_9fa48("13") ? true : (stryCov_9fa48("13", "14", "15"), this.#inFlight === 0)) {
        if (stryMutAct_9fa48("16")) {
          {}
        } else {
          stryCov_9fa48("16");
          this.#inFlight = 1;
          const delivery = this.#listen(event);
          this.#tail = delivery;
          if (stryMutAct_9fa48("18") ? false : stryMutAct_9fa48("17") ? true : (stryCov_9fa48("17", "18"), endsSomething(event))) this.host.delivered(event, delivery);
          return (stryMutAct_9fa48("22") ? this.#inFlight <= 0 : stryMutAct_9fa48("21") ? this.#inFlight >= 0 : stryMutAct_9fa48("20") ? false : stryMutAct_9fa48("19") ? true : (stryCov_9fa48("19", "20", "21", "22"), this.#inFlight > 0)) ? delivery : undefined;
        }
      }
      // Not an async wrapper: the step's promise must be the listeners' own, as pi's emit is.
      this.#step(() => {
        if (stryMutAct_9fa48("23")) {
          {}
        } else {
          stryCov_9fa48("23");
          const delivery = this.#listen(event);
          if (stryMutAct_9fa48("25") ? false : stryMutAct_9fa48("24") ? true : (stryCov_9fa48("24", "25"), endsSomething(event))) this.host.delivered(event, delivery);
          return delivery;
        }
      });
      return this.#tail;
    }
  }

  /**
   * Queues a step that is not an event; it runs once everything before it was delivered.
   *
   * @example
   * delivery.after(() => actor.send({ type: "delivered", barrier }));
   */
  after(step: () => void): void {
    if (stryMutAct_9fa48("26")) {
      {}
    } else {
      stryCov_9fa48("26");
      if (stryMutAct_9fa48("29") ? this.#inFlight !== 0 : stryMutAct_9fa48("28") ? false : stryMutAct_9fa48("27") ? true : (stryCov_9fa48("27", "28", "29"), this.#inFlight === 0)) {
        if (stryMutAct_9fa48("30")) {
          {}
        } else {
          stryCov_9fa48("30");
          step();
          return;
        }
      }
      this.#step(async () => {
        if (stryMutAct_9fa48("31")) {
          {}
        } else {
          stryCov_9fa48("31");
          try {
            if (stryMutAct_9fa48("32")) {
              {}
            } else {
              stryCov_9fa48("32");
              step();
            }
          } finally {
            if (stryMutAct_9fa48("33")) {
              {}
            } else {
              stryCov_9fa48("33");
              stryMutAct_9fa48("34") ? this.#inFlight++ : (stryCov_9fa48("34"), this.#inFlight--);
            }
          }
        }
      });
    }
  }

  /**
   * Undefined when every queued step is done; otherwise the promise of the last one. The
   * stream actor waits on it after each event, as pi's loop awaits each `emit`.
   *
   * @example
   * const pending = delivery.pending(); if (pending) await pending;
   */
  pending(): Promise<void> | undefined {
    if (stryMutAct_9fa48("35")) {
      {}
    } else {
      stryCov_9fa48("35");
      return (stryMutAct_9fa48("39") ? this.#inFlight <= 0 : stryMutAct_9fa48("38") ? this.#inFlight >= 0 : stryMutAct_9fa48("37") ? false : stryMutAct_9fa48("36") ? true : (stryCov_9fa48("36", "37", "38", "39"), this.#inFlight > 0)) ? this.#tail : undefined;
    }
  }

  /** Queues a step behind the last one. Only called with a step in flight: when none is, callers run theirs at once. */
  #step(run: () => Promise<void>): void {
    if (stryMutAct_9fa48("40")) {
      {}
    } else {
      stryCov_9fa48("40");
      stryMutAct_9fa48("41") ? this.#inFlight-- : (stryCov_9fa48("41"), this.#inFlight++);
      this.#tail = (this.#tail as Promise<void>).then(run);
    }
  }
  async #listen(event: AgentEvent): Promise<void> {
    if (stryMutAct_9fa48("42")) {
      {}
    } else {
      stryCov_9fa48("42");
      try {
        if (stryMutAct_9fa48("43")) {
          {}
        } else {
          stryCov_9fa48("43");
          // A token delta's update is done here: nearly every event is one.
          if (stryMutAct_9fa48("46") ? event.type !== "message_update" : stryMutAct_9fa48("45") ? false : stryMutAct_9fa48("44") ? true : (stryCov_9fa48("44", "45", "46"), event.type === (stryMutAct_9fa48("47") ? "" : (stryCov_9fa48("47"), "message_update")))) this.state.streamingMessage = event.message;else this.host.reduce(event);
          const signal = this.signal;
          for (const listener of this.listeners) {
            if (stryMutAct_9fa48("48")) {
              {}
            } else {
              stryCov_9fa48("48");
              try {
                if (stryMutAct_9fa48("49")) {
                  {}
                } else {
                  stryCov_9fa48("49");
                  await listener(event, signal);
                }
              } catch (error) {
                if (stryMutAct_9fa48("50")) {
                  {}
                } else {
                  stryCov_9fa48("50");
                  this.host.listenerFailed(describeError(error));
                }
              }
            }
          }
        }
      } finally {
        if (stryMutAct_9fa48("51")) {
          {}
        } else {
          stryCov_9fa48("51");
          stryMutAct_9fa48("52") ? this.#inFlight++ : (stryCov_9fa48("52"), this.#inFlight--);
        }
      }
    }
  }
}
function endsSomething(event: AgentEvent): boolean {
  if (stryMutAct_9fa48("53")) {
    {}
  } else {
    stryCov_9fa48("53");
    return stryMutAct_9fa48("56") ? event.type === "agent_end" && event.type === "auto_compaction_end" : stryMutAct_9fa48("55") ? false : stryMutAct_9fa48("54") ? true : (stryCov_9fa48("54", "55", "56"), (stryMutAct_9fa48("58") ? event.type !== "agent_end" : stryMutAct_9fa48("57") ? false : (stryCov_9fa48("57", "58"), event.type === (stryMutAct_9fa48("59") ? "" : (stryCov_9fa48("59"), "agent_end")))) || (stryMutAct_9fa48("61") ? event.type !== "auto_compaction_end" : stryMutAct_9fa48("60") ? false : (stryCov_9fa48("60", "61"), event.type === (stryMutAct_9fa48("62") ? "" : (stryCov_9fa48("62"), "auto_compaction_end")))));
  }
}