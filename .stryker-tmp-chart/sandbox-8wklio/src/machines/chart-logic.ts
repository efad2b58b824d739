/**
 * A lean interpreter for a statechart written with XState: the same chart, guards, actions and
 * actors, run as an XState `ActorLogic` of our own. `createActor(chartLogic(machine))` is an
 * XState actor like `createActor(machine)` (mailbox, `on`, `subscribe`, `system.inspect`,
 * children that are XState actors), but a step costs what the chart's own work costs: no
 * snapshot rebuilt per `assign`, no action objects resolved per step, no state value
 * recomputed until someone reads it.
 *
 * Why not XState's interpreter: a 3-tool turn of the agent chart takes 16 events, 28
 * microsteps and 44 assigns, and XState v5 spends ~6 µs per event before any of our code runs
 * (measured then; bench/where-time-goes.ts now splits a run into its parts). The chart stays
 * the XState machine: tests walk its graph, the inspector draws it, `agentchart/machine`
 * embeds it; this module only executes it faster.
 *
 * What it runs is the subset of SCXML the agent chart uses, checked when the logic is built:
 * compound and atomic states, one final state at the top level, entry and exit actions,
 * `invoke` (with `onDone`/`onError`), event and eventless (`always`) transitions with named or
 * `and`/`or`/`not` guards, `assign` and `enqueueActions` actions (assign, emit, raise, cancel,
 * sendTo, spawnChild, stopChild). Parallel and history states, wildcard event descriptors,
 * delayed transitions and parameterised actions are refused with an error naming the state.
 * Timing follows XState's: actions run during the step, effects (emits, sends to children,
 * child starts, scheduled events) after the step, in order, once the snapshot is updated.
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
import { type ActorLogic, type AnyActorLogic, type AnyActorRef, type AnyActorScope, type AnyStateMachine, type ContextFrom, type EmittedFrom, type EventFromLogic, type EventObject, type InputFrom, type OutputFrom, type Snapshot, type StateValue, and, matchesState, not, or } from "xstate";
import { spawnChild } from "./lean-actor.js";
type AnyActorSystem = AnyActorScope["system"];

/** XState's state node, as far as the interpreter reads it. */
interface StateNodeLike {
  readonly id: string;
  readonly key: string;
  readonly type: "atomic" | "compound" | "parallel" | "final" | "history";
  readonly order: number;
  readonly parent?: StateNodeLike | undefined;
  readonly states: Record<string, StateNodeLike>;
  readonly entry: readonly unknown[];
  readonly exit: readonly unknown[];
  readonly invoke: readonly InvokeLike[];
  readonly transitions: Map<string, readonly TransitionLike[]>;
  readonly always?: readonly TransitionLike[] | undefined;
  readonly initial: {
    readonly target: readonly StateNodeLike[];
    readonly actions: readonly unknown[];
  };
  readonly after: readonly unknown[];
  readonly output?: unknown;
}
interface InvokeLike {
  readonly id: string;
  readonly src: unknown;
  readonly input?: unknown;
  readonly systemId?: string | undefined;
  readonly onSnapshot?: unknown;
}

/** XState's transition definition: kept as it is for the inspector's microstep records. */
interface TransitionLike {
  readonly source: StateNodeLike;
  readonly target?: readonly StateNodeLike[] | undefined;
  readonly actions: readonly unknown[];
  readonly guard?: unknown;
  readonly reenter: boolean;
  readonly eventType: string;
}

/** What a guard is asked with: one object per selection of a transition, shared by its guards. */
interface GuardArgs<C> {
  readonly context: C;
  readonly event: EventObject;
}
type Guard<C> = (args: GuardArgs<C>) => boolean;
type Action<C> = (step: Step<C>) => void;
interface Node<C> {
  readonly def: StateNodeLike;
  readonly parent: Node<C> | undefined;
  entry: Action<C>[];
  exit: Action<C>[];
  on: Map<string, Transition<C>[]>;
  always: Transition<C>[];
  /** The initial child, for a compound state. */
  initial: Node<C> | undefined;
  /** Entered directly under the root: entering it ends the machine. */
  readonly final: boolean;
  /** The state's invoked actors (XState's `invoke` getter builds its list on each read). */
  invoke: readonly InvokeLike[];
}
interface Transition<C> {
  readonly def: TransitionLike;
  readonly guard: Guard<C> | undefined;
  readonly actions: Action<C>[];
  /** Targeted transitions: every active state below `domain` is exited; then these are entered, in order. */
  readonly target: {
    domain: Node<C>;
    exitDomain: boolean;
    enter: Node<C>[];
    leaf: Node<C>;
  } | undefined;
}
interface Chart<C> {
  readonly machine: AnyStateMachine;
  readonly root: Node<C>;
}

/** The system's methods XState keeps internal but its own interpreter calls. */
interface SystemInternals {
  _sendInspectionEvent(event: Record<string, unknown>): void;
  _relay(source: AnyActorRef | undefined, target: AnyActorRef, event: EventObject): void;
}

/** How XState names an actor given inline in `invoke` (not in `setup({ actors })`). */
const INLINE_INVOKE = stryMutAct_9fa48("65") ? /^xstate\.invoke\.\D+\./ : stryMutAct_9fa48("64") ? /^xstate\.invoke\.\d\./ : stryMutAct_9fa48("63") ? /xstate\.invoke\.\d+\./ : (stryCov_9fa48("63", "64", "65"), /^xstate\.invoke\.\d+\./);
const AND_CHECK = (and([]) as unknown as {
  check: unknown;
}).check;
const OR_CHECK = (or([]) as unknown as {
  check: unknown;
}).check;
const NOT_CHECK = (not("never") as unknown as {
  check: unknown;
}).check;

/** An actor's processing status, as XState's actors (and lean ones) keep it. */
const NOT_STARTED = 0;
const STOPPED = 2;
function processingStatus(actor: AnyActorRef): number | undefined {
  if (stryMutAct_9fa48("66")) {
    {}
  } else {
    stryCov_9fa48("66");
    return (actor as {
      _processingStatus?: number;
    })._processingStatus;
  }
}

/**
 * A snapshot of a chart run by {@link chartLogic}: what `actor.getSnapshot()` returns. Shaped as
 * XState's machine snapshot for the fields agentchart documents (`status`, `value`, `context`,
 * `children`, `output`, `error`, `matches`); `value` is computed on first read.
 *
 * @example
 * const snapshot = actor.getSnapshot();
 * if (snapshot.matches({ running: "streaming" })) console.log(snapshot.context.run?.turn);
 */
export type ChartSnapshot<C, O = unknown> = Snapshot<O> & {
  readonly context: C;
  readonly value: StateValue;
  readonly children: Readonly<Record<string, AnyActorRef | undefined>>;
  matches(value: StateValue): boolean;
};
class ChartState<C, O = unknown> {
  #value: StateValue | undefined;
  constructor(readonly status: "active" | "done" | "error" | "stopped", readonly context: C, readonly children: Readonly<Record<string, AnyActorRef | undefined>>, /** The active atomic state (internal: read `value`). */
  readonly _leaf: Node<C>, readonly output: O | undefined, readonly error: unknown) {}

  /** The active states as XState writes them: `"idle"`, `{ running: "streaming" }`, ... */
  get value(): StateValue {
    if (stryMutAct_9fa48("67")) {
      {}
    } else {
      stryCov_9fa48("67");
      stryMutAct_9fa48("68") ? this.#value &&= stateValueOf(this._leaf) : (stryCov_9fa48("68"), this.#value ??= stateValueOf(this._leaf));
      return this.#value;
    }
  }

  /** The active state nodes, root first (XState's `_nodes`, read by the inspector). */
  get _nodes(): StateNodeLike[] {
    if (stryMutAct_9fa48("69")) {
      {}
    } else {
      stryCov_9fa48("69");
      const nodes: StateNodeLike[] = stryMutAct_9fa48("70") ? ["Stryker was here"] : (stryCov_9fa48("70"), []);
      for (let node: Node<C> | undefined = this._leaf; stryMutAct_9fa48("71") ? false : (stryCov_9fa48("71"), node); node = node.parent) nodes.unshift(node.def);
      return nodes;
    }
  }

  /** True when the chart is in this state. @example snapshot.matches("idle") */
  matches(value: StateValue): boolean {
    if (stryMutAct_9fa48("72")) {
      {}
    } else {
      stryCov_9fa48("72");
      return matchesState(value, this.value);
    }
  }

  /** @example JSON.stringify(actor.getSnapshot()) */
  toJSON(): {
    status: string;
    value: StateValue;
    context: C;
    output: O | undefined;
    error: unknown;
  } {
    if (stryMutAct_9fa48("73")) {
      {}
    } else {
      stryCov_9fa48("73");
      return stryMutAct_9fa48("74") ? {} : (stryCov_9fa48("74"), {
        status: this.status,
        value: this.value,
        context: this.context,
        output: this.output,
        error: this.error
      });
    }
  }
}
function stateValueOf<C>(leaf: Node<C>): StateValue {
  if (stryMutAct_9fa48("75")) {
    {}
  } else {
    stryCov_9fa48("75");
    let value: StateValue = leaf.def.key;
    for (let node = leaf.parent; stryMutAct_9fa48("77") ? node.parent : stryMutAct_9fa48("76") ? false : (stryCov_9fa48("76", "77"), node?.parent); node = node.parent) value = stryMutAct_9fa48("78") ? {} : (stryCov_9fa48("78"), {
      [node.def.key]: value
    });
    return value;
  }
}

/** One macrostep's working state: the context and children as actions change them. */
class Step<C> {
  context: C;
  children: Record<string, AnyActorRef | undefined>;
  childrenCopied = stryMutAct_9fa48("79") ? true : (stryCov_9fa48("79"), false);
  leaf: Node<C>;
  status: "active" | "done" | "error" | "stopped" = stryMutAct_9fa48("80") ? "" : (stryCov_9fa48("80"), "active");
  output: unknown = undefined;
  event: EventObject;
  changed = stryMutAct_9fa48("81") ? true : (stryCov_9fa48("81"), false);
  readonly internal: EventObject[] = stryMutAct_9fa48("82") ? ["Stryker was here"] : (stryCov_9fa48("82"), []);
  readonly enqueue: StepEnqueue<C>;
  constructor(readonly chart: Chart<C>, readonly scope: AnyActorScope, snapshot: {
    context: C;
    children: Readonly<Record<string, AnyActorRef | undefined>>;
    _leaf: Node<C>;
  }, event: EventObject) {
    if (stryMutAct_9fa48("83")) {
      {}
    } else {
      stryCov_9fa48("83");
      this.context = snapshot.context;
      this.children = snapshot.children as Record<string, AnyActorRef | undefined>;
      this.leaf = snapshot._leaf;
      this.event = event;
      this.enqueue = new StepEnqueue(this);
    }
  }
  get system(): SystemInternals {
    if (stryMutAct_9fa48("84")) {
      {}
    } else {
      stryCov_9fa48("84");
      return this.scope.system as unknown as SystemInternals;
    }
  }
  assign(patch: Partial<C>): void {
    if (stryMutAct_9fa48("85")) {
      {}
    } else {
      stryCov_9fa48("85");
      this.context = stryMutAct_9fa48("86") ? {} : (stryCov_9fa48("86"), {
        ...this.context,
        ...patch
      });
      this.changed = stryMutAct_9fa48("87") ? false : (stryCov_9fa48("87"), true);
    }
  }
  writableChildren(): Record<string, AnyActorRef | undefined> {
    if (stryMutAct_9fa48("88")) {
      {}
    } else {
      stryCov_9fa48("88");
      if (stryMutAct_9fa48("91") ? false : stryMutAct_9fa48("90") ? true : stryMutAct_9fa48("89") ? this.childrenCopied : (stryCov_9fa48("89", "90", "91"), !this.childrenCopied)) {
        if (stryMutAct_9fa48("92")) {
          {}
        } else {
          stryCov_9fa48("92");
          this.children = stryMutAct_9fa48("93") ? {} : (stryCov_9fa48("93"), {
            ...this.children
          });
          this.childrenCopied = stryMutAct_9fa48("94") ? false : (stryCov_9fa48("94"), true);
        }
      }
      this.changed = stryMutAct_9fa48("95") ? false : (stryCov_9fa48("95"), true);
      return this.children;
    }
  }
  spawn(src: string, id: string, input: unknown): void {
    if (stryMutAct_9fa48("96")) {
      {}
    } else {
      stryCov_9fa48("96");
      const logic = (this.chart.machine.implementations.actors as Record<string, AnyActorLogic | undefined>)[src];
      if (stryMutAct_9fa48("99") ? false : stryMutAct_9fa48("98") ? true : stryMutAct_9fa48("97") ? logic : (stryCov_9fa48("97", "98", "99"), !logic)) throw new Error(stryMutAct_9fa48("100") ? `` : (stryCov_9fa48("100"), `agentchart interpreter: actor '${src}' is not implemented`));
      const child = spawnChild(logic, stryMutAct_9fa48("101") ? {} : (stryCov_9fa48("101"), {
        id,
        src,
        parent: this.scope.self,
        input
      }));
      this.writableChildren()[id] = child;
      this.scope.defer(() => {
        if (stryMutAct_9fa48("102")) {
          {}
        } else {
          stryCov_9fa48("102");
          // Stopped in the step that spawned it (XState's actors would start all the same).
          if (stryMutAct_9fa48("105") ? processingStatus(child) !== STOPPED : stryMutAct_9fa48("104") ? false : stryMutAct_9fa48("103") ? true : (stryCov_9fa48("103", "104", "105"), processingStatus(child) === STOPPED)) return;
          child.start();
        }
      });
    }
  }
  stopChild(id: string): void {
    if (stryMutAct_9fa48("106")) {
      {}
    } else {
      stryCov_9fa48("106");
      const children = this.children;
      const child = children[id];
      if (stryMutAct_9fa48("109") ? false : stryMutAct_9fa48("108") ? true : stryMutAct_9fa48("107") ? child : (stryCov_9fa48("107", "108", "109"), !child)) return;
      // A copy without it, not `delete`: deleting a key turns an object into a slow dictionary.
      const rest: Record<string, AnyActorRef | undefined> = {};
      for (const key in children) if (stryMutAct_9fa48("112") ? key === id : stryMutAct_9fa48("111") ? false : stryMutAct_9fa48("110") ? true : (stryCov_9fa48("110", "111", "112"), key !== id)) rest[key] = children[key];
      this.children = rest;
      this.childrenCopied = stryMutAct_9fa48("113") ? false : (stryCov_9fa48("113"), true);
      this.changed = stryMutAct_9fa48("114") ? false : (stryCov_9fa48("114"), true);
      const scope = this.scope;
      // Stopped within the step that spawned it: it never starts (XState does the same).
      if (stryMutAct_9fa48("117") ? processingStatus(child) !== NOT_STARTED : stryMutAct_9fa48("116") ? false : stryMutAct_9fa48("115") ? true : (stryCov_9fa48("115", "116", "117"), processingStatus(child) === NOT_STARTED)) {
        if (stryMutAct_9fa48("118")) {
          {}
        } else {
          stryCov_9fa48("118");
          scope.stopChild(child);
          return;
        }
      }
      // Events already sent to it are delivered first.
      scope.defer(stryMutAct_9fa48("119") ? () => undefined : (stryCov_9fa48("119"), () => scope.stopChild(child)));
    }
  }
  emit(event: EventObject): void {
    if (stryMutAct_9fa48("120")) {
      {}
    } else {
      stryCov_9fa48("120");
      const scope = this.scope;
      if (stryMutAct_9fa48("122") ? false : stryMutAct_9fa48("121") ? true : (stryCov_9fa48("121", "122"), inspecting(this.system))) this.system._sendInspectionEvent(stryMutAct_9fa48("123") ? {} : (stryCov_9fa48("123"), {
        type: stryMutAct_9fa48("124") ? "" : (stryCov_9fa48("124"), "@xstate.action"),
        actorRef: scope.self,
        action: stryMutAct_9fa48("125") ? {} : (stryCov_9fa48("125"), {
          type: stryMutAct_9fa48("126") ? "" : (stryCov_9fa48("126"), "xstate.emit"),
          params: stryMutAct_9fa48("127") ? {} : (stryCov_9fa48("127"), {
            event
          })
        })
      }));
      // A lean actor queues the event itself; XState's scope takes an effect to run.
      const lean = scope as {
        deferEmit?: (event: EventObject) => void;
      };
      if (stryMutAct_9fa48("129") ? false : stryMutAct_9fa48("128") ? true : (stryCov_9fa48("128", "129"), lean.deferEmit)) lean.deferEmit(event);else scope.defer(stryMutAct_9fa48("130") ? () => undefined : (stryCov_9fa48("130"), () => scope.emit(event)));
    }
  }
  snapshot(): ChartState<C> {
    if (stryMutAct_9fa48("131")) {
      {}
    } else {
      stryCov_9fa48("131");
      return new ChartState(this.status, this.context, this.children, this.leaf, this.output, undefined);
    }
  }
}

/** The `enqueue` of `enqueueActions` bodies, acting on the step directly. */
class StepEnqueue<C> {
  constructor(readonly step: Step<C>) {}
  assign(patch: Partial<C> | ((args: {
    context: C;
    event: EventObject;
  }) => Partial<C>)): void {
    if (stryMutAct_9fa48("132")) {
      {}
    } else {
      stryCov_9fa48("132");
      const step = this.step;
      step.assign((stryMutAct_9fa48("135") ? typeof patch !== "function" : stryMutAct_9fa48("134") ? false : stryMutAct_9fa48("133") ? true : (stryCov_9fa48("133", "134", "135"), typeof patch === (stryMutAct_9fa48("136") ? "" : (stryCov_9fa48("136"), "function")))) ? patch(stryMutAct_9fa48("137") ? {} : (stryCov_9fa48("137"), {
        context: step.context,
        event: step.event
      })) : patch);
    }
  }
  emit(event: EventObject): void {
    if (stryMutAct_9fa48("138")) {
      {}
    } else {
      stryCov_9fa48("138");
      this.step.emit(event);
    }
  }
  raise(event: EventObject, options?: {
    delay?: number;
    id?: string;
  }): void {
    if (stryMutAct_9fa48("139")) {
      {}
    } else {
      stryCov_9fa48("139");
      const step = this.step;
      if (stryMutAct_9fa48("142") ? typeof options?.delay === "number" : stryMutAct_9fa48("141") ? false : stryMutAct_9fa48("140") ? true : (stryCov_9fa48("140", "141", "142"), typeof (stryMutAct_9fa48("143") ? options.delay : (stryCov_9fa48("143"), options?.delay)) !== (stryMutAct_9fa48("144") ? "" : (stryCov_9fa48("144"), "number")))) {
        if (stryMutAct_9fa48("145")) {
          {}
        } else {
          stryCov_9fa48("145");
          step.internal.push(event);
          return;
        }
      }
      const {
        delay,
        id
      } = options;
      const scope = step.scope;
      scope.defer(stryMutAct_9fa48("146") ? () => undefined : (stryCov_9fa48("146"), () => scope.system.scheduler.schedule(scope.self, scope.self, event, delay, id)));
    }
  }
  cancel(id: string): void {
    if (stryMutAct_9fa48("147")) {
      {}
    } else {
      stryCov_9fa48("147");
      const scope = this.step.scope;
      scope.defer(stryMutAct_9fa48("148") ? () => undefined : (stryCov_9fa48("148"), () => scope.system.scheduler.cancel(scope.self, id)));
    }
  }
  sendTo(target: string, event: EventObject): void {
    if (stryMutAct_9fa48("149")) {
      {}
    } else {
      stryCov_9fa48("149");
      const step = this.step;
      const child = step.children[target];
      if (stryMutAct_9fa48("152") ? false : stryMutAct_9fa48("151") ? true : stryMutAct_9fa48("150") ? child : (stryCov_9fa48("150", "151", "152"), !child)) throw new Error(stryMutAct_9fa48("153") ? `` : (stryCov_9fa48("153"), `Unable to send event to actor '${target}' from machine '${step.chart.machine.id}'.`));
      step.scope.defer(stryMutAct_9fa48("154") ? () => undefined : (stryCov_9fa48("154"), () => step.system._relay(step.scope.self, child, event)));
    }
  }
  spawnChild(src: string, options: {
    id: string;
    input?: unknown;
  }): void {
    if (stryMutAct_9fa48("155")) {
      {}
    } else {
      stryCov_9fa48("155");
      this.step.spawn(src, options.id, options.input);
    }
  }
  stopChild(id: string): void {
    if (stryMutAct_9fa48("156")) {
      {}
    } else {
      stryCov_9fa48("156");
      this.step.stopChild(id);
    }
  }
}
function unsupported(what: string, where: string): Error {
  if (stryMutAct_9fa48("157")) {
    {}
  } else {
    stryCov_9fa48("157");
    return new Error(stryMutAct_9fa48("158") ? `` : (stryCov_9fa48("158"), `agentchart interpreter: ${what} (in '${where}') is not supported; run this chart with XState's createActor(machine)`));
  }
}
function compileGuard<C>(machine: AnyStateMachine, guard: unknown, where: string): Guard<C> {
  if (stryMutAct_9fa48("159")) {
    {}
  } else {
    stryCov_9fa48("159");
    if (stryMutAct_9fa48("162") ? typeof guard !== "string" : stryMutAct_9fa48("161") ? false : stryMutAct_9fa48("160") ? true : (stryCov_9fa48("160", "161", "162"), typeof guard === (stryMutAct_9fa48("163") ? "" : (stryCov_9fa48("163"), "string")))) {
      if (stryMutAct_9fa48("164")) {
        {}
      } else {
        stryCov_9fa48("164");
        const impl = (machine.implementations.guards as Record<string, unknown>)[guard];
        if (stryMutAct_9fa48("167") ? impl !== undefined : stryMutAct_9fa48("166") ? false : stryMutAct_9fa48("165") ? true : (stryCov_9fa48("165", "166", "167"), impl === undefined)) throw new Error(stryMutAct_9fa48("168") ? `` : (stryCov_9fa48("168"), `Guard '${guard}' is not implemented.'.`));
        return compileGuard(machine, impl, where);
      }
    }
    if (stryMutAct_9fa48("171") ? typeof guard === "function" : stryMutAct_9fa48("170") ? false : stryMutAct_9fa48("169") ? true : (stryCov_9fa48("169", "170", "171"), typeof guard !== (stryMutAct_9fa48("172") ? "" : (stryCov_9fa48("172"), "function")))) throw unsupported(stryMutAct_9fa48("173") ? "" : (stryCov_9fa48("173"), "a guard with params"), where);
    const builtin = guard as {
      check?: unknown;
      guards?: readonly unknown[];
    };
    if (stryMutAct_9fa48("176") ? builtin.check !== undefined : stryMutAct_9fa48("175") ? false : stryMutAct_9fa48("174") ? true : (stryCov_9fa48("174", "175", "176"), builtin.check === undefined)) {
      if (stryMutAct_9fa48("177")) {
        {}
      } else {
        stryCov_9fa48("177");
        const check = guard as (args: GuardArgs<C>, params: undefined) => boolean;
        return stryMutAct_9fa48("178") ? () => undefined : (stryCov_9fa48("178"), args => check(args, undefined));
      }
    }
    // Loops, not every/some with a callback: guards run at every step, a closure per call adds up.
    const parts = (stryMutAct_9fa48("179") ? builtin.guards && [] : (stryCov_9fa48("179"), builtin.guards ?? (stryMutAct_9fa48("180") ? ["Stryker was here"] : (stryCov_9fa48("180"), [])))).map(stryMutAct_9fa48("181") ? () => undefined : (stryCov_9fa48("181"), part => compileGuard<C>(machine, part, where)));
    if (stryMutAct_9fa48("184") ? builtin.check !== AND_CHECK : stryMutAct_9fa48("183") ? false : stryMutAct_9fa48("182") ? true : (stryCov_9fa48("182", "183", "184"), builtin.check === AND_CHECK)) {
      if (stryMutAct_9fa48("185")) {
        {}
      } else {
        stryCov_9fa48("185");
        return args => {
          if (stryMutAct_9fa48("186")) {
            {}
          } else {
            stryCov_9fa48("186");
            for (const part of parts) if (stryMutAct_9fa48("189") ? false : stryMutAct_9fa48("188") ? true : stryMutAct_9fa48("187") ? part(args) : (stryCov_9fa48("187", "188", "189"), !part(args))) return stryMutAct_9fa48("190") ? true : (stryCov_9fa48("190"), false);
            return stryMutAct_9fa48("191") ? false : (stryCov_9fa48("191"), true);
          }
        };
      }
    }
    if (stryMutAct_9fa48("194") ? builtin.check !== OR_CHECK : stryMutAct_9fa48("193") ? false : stryMutAct_9fa48("192") ? true : (stryCov_9fa48("192", "193", "194"), builtin.check === OR_CHECK)) {
      if (stryMutAct_9fa48("195")) {
        {}
      } else {
        stryCov_9fa48("195");
        return args => {
          if (stryMutAct_9fa48("196")) {
            {}
          } else {
            stryCov_9fa48("196");
            for (const part of parts) if (stryMutAct_9fa48("198") ? false : stryMutAct_9fa48("197") ? true : (stryCov_9fa48("197", "198"), part(args))) return stryMutAct_9fa48("199") ? false : (stryCov_9fa48("199"), true);
            return stryMutAct_9fa48("200") ? true : (stryCov_9fa48("200"), false);
          }
        };
      }
    }
    const [negated] = parts;
    if (stryMutAct_9fa48("203") ? builtin.check === NOT_CHECK || negated : stryMutAct_9fa48("202") ? false : stryMutAct_9fa48("201") ? true : (stryCov_9fa48("201", "202", "203"), (stryMutAct_9fa48("205") ? builtin.check !== NOT_CHECK : stryMutAct_9fa48("204") ? true : (stryCov_9fa48("204", "205"), builtin.check === NOT_CHECK)) && negated)) return stryMutAct_9fa48("206") ? () => undefined : (stryCov_9fa48("206"), args => stryMutAct_9fa48("207") ? negated(args) : (stryCov_9fa48("207"), !negated(args)));
    throw unsupported(stryMutAct_9fa48("208") ? "" : (stryCov_9fa48("208"), "a built-in guard other than and/or/not"), where);
  }
}
function compileAction<C>(machine: AnyStateMachine, action: unknown, where: string): Action<C> {
  if (stryMutAct_9fa48("209")) {
    {}
  } else {
    stryCov_9fa48("209");
    const impl = (stryMutAct_9fa48("212") ? typeof action !== "string" : stryMutAct_9fa48("211") ? false : stryMutAct_9fa48("210") ? true : (stryCov_9fa48("210", "211", "212"), typeof action === (stryMutAct_9fa48("213") ? "" : (stryCov_9fa48("213"), "string")))) ? (machine.implementations.actions as Record<string, unknown>)[action] : action;
    if (stryMutAct_9fa48("216") ? impl !== undefined : stryMutAct_9fa48("215") ? false : stryMutAct_9fa48("214") ? true : (stryCov_9fa48("214", "215", "216"), impl === undefined)) throw new Error(stryMutAct_9fa48("217") ? `` : (stryCov_9fa48("217"), `agentchart interpreter: action '${String(action)}' is not implemented`));
    const builtin = impl as {
      type?: unknown;
      assignment?: unknown;
      collect?: unknown;
    };
    if (stryMutAct_9fa48("220") ? builtin.type !== "xstate.assign" : stryMutAct_9fa48("219") ? false : stryMutAct_9fa48("218") ? true : (stryCov_9fa48("218", "219", "220"), builtin.type === (stryMutAct_9fa48("221") ? "" : (stryCov_9fa48("221"), "xstate.assign")))) {
      if (stryMutAct_9fa48("222")) {
        {}
      } else {
        stryCov_9fa48("222");
        const assignment = builtin.assignment;
        if (stryMutAct_9fa48("225") ? typeof assignment !== "function" : stryMutAct_9fa48("224") ? false : stryMutAct_9fa48("223") ? true : (stryCov_9fa48("223", "224", "225"), typeof assignment === (stryMutAct_9fa48("226") ? "" : (stryCov_9fa48("226"), "function")))) {
          if (stryMutAct_9fa48("227")) {
            {}
          } else {
            stryCov_9fa48("227");
            const assigner = assignment as (args: {
              context: C;
              event: EventObject;
            }, params: undefined) => Partial<C>;
            return stryMutAct_9fa48("228") ? () => undefined : (stryCov_9fa48("228"), step => step.assign(assigner(stryMutAct_9fa48("229") ? {} : (stryCov_9fa48("229"), {
              context: step.context,
              event: step.event
            }), undefined)));
          }
        }
        const properties = Object.entries(assignment as Record<string, unknown>);
        return step => {
          if (stryMutAct_9fa48("230")) {
            {}
          } else {
            stryCov_9fa48("230");
            const patch: Record<string, unknown> = {};
            for (const [key, value] of properties) {
              if (stryMutAct_9fa48("231")) {
                {}
              } else {
                stryCov_9fa48("231");
                patch[key] = (stryMutAct_9fa48("234") ? typeof value !== "function" : stryMutAct_9fa48("233") ? false : stryMutAct_9fa48("232") ? true : (stryCov_9fa48("232", "233", "234"), typeof value === (stryMutAct_9fa48("235") ? "" : (stryCov_9fa48("235"), "function")))) ? (value as (args: {
                  context: C;
                  event: EventObject;
                }) => unknown)(stryMutAct_9fa48("236") ? {} : (stryCov_9fa48("236"), {
                  context: step.context,
                  event: step.event
                })) : value;
              }
            }
            step.assign(patch as Partial<C>);
          }
        };
      }
    }
    if (stryMutAct_9fa48("239") ? builtin.type !== "xstate.enqueueActions" : stryMutAct_9fa48("238") ? false : stryMutAct_9fa48("237") ? true : (stryCov_9fa48("237", "238", "239"), builtin.type === (stryMutAct_9fa48("240") ? "" : (stryCov_9fa48("240"), "xstate.enqueueActions")))) {
      if (stryMutAct_9fa48("241")) {
        {}
      } else {
        stryCov_9fa48("241");
        type Collect = (args: {
          context: C;
          event: EventObject;
          self: AnyActorRef;
          system: AnyActorSystem;
          enqueue: StepEnqueue<C>;
        }, params: undefined) => void;
        const collect = builtin.collect as Collect;
        return stryMutAct_9fa48("242") ? () => undefined : (stryCov_9fa48("242"), step => collect(stryMutAct_9fa48("243") ? {} : (stryCov_9fa48("243"), {
          context: step.context,
          event: step.event,
          self: step.scope.self,
          system: step.scope.system,
          enqueue: step.enqueue
        }), undefined));
      }
    }
    throw unsupported(stryMutAct_9fa48("244") ? `` : (stryCov_9fa48("244"), `action '${String((stryMutAct_9fa48("247") ? typeof action !== "string" : stryMutAct_9fa48("246") ? false : stryMutAct_9fa48("245") ? true : (stryCov_9fa48("245", "246", "247"), typeof action === (stryMutAct_9fa48("248") ? "" : (stryCov_9fa48("248"), "string")))) ? action : builtin.type)}' (only assign and enqueueActions are)`), where);
  }
}
function isDescendant(node: StateNodeLike, ancestor: StateNodeLike): boolean {
  if (stryMutAct_9fa48("249")) {
    {}
  } else {
    stryCov_9fa48("249");
    for (let parent = node.parent; stryMutAct_9fa48("250") ? false : (stryCov_9fa48("250"), parent); parent = parent.parent) if (stryMutAct_9fa48("253") ? parent !== ancestor : stryMutAct_9fa48("252") ? false : stryMutAct_9fa48("251") ? true : (stryCov_9fa48("251", "252", "253"), parent === ancestor)) return stryMutAct_9fa48("254") ? false : (stryCov_9fa48("254"), true);
    return stryMutAct_9fa48("255") ? true : (stryCov_9fa48("255"), false);
  }
}

/** XState's transition domain for a single-target transition without history states. */
function domainOf(transition: TransitionLike, root: StateNodeLike): StateNodeLike {
  if (stryMutAct_9fa48("256")) {
    {}
  } else {
    stryCov_9fa48("256");
    const [target] = stryMutAct_9fa48("257") ? transition.target && [] : (stryCov_9fa48("257"), transition.target ?? (stryMutAct_9fa48("258") ? ["Stryker was here"] : (stryCov_9fa48("258"), [])));
    const source = transition.source;
    if (stryMutAct_9fa48("261") ? false : stryMutAct_9fa48("260") ? true : stryMutAct_9fa48("259") ? target : (stryCov_9fa48("259", "260", "261"), !target)) return source;
    if (stryMutAct_9fa48("264") ? !transition.reenter || target === source || isDescendant(target, source) : stryMutAct_9fa48("263") ? false : stryMutAct_9fa48("262") ? true : (stryCov_9fa48("262", "263", "264"), (stryMutAct_9fa48("265") ? transition.reenter : (stryCov_9fa48("265"), !transition.reenter)) && (stryMutAct_9fa48("267") ? target === source && isDescendant(target, source) : stryMutAct_9fa48("266") ? true : (stryCov_9fa48("266", "267"), (stryMutAct_9fa48("269") ? target !== source : stryMutAct_9fa48("268") ? false : (stryCov_9fa48("268", "269"), target === source)) || isDescendant(target, source))))) return source;
    for (let ancestor = target.parent; stryMutAct_9fa48("270") ? false : (stryCov_9fa48("270"), ancestor); ancestor = ancestor.parent) if (stryMutAct_9fa48("272") ? false : stryMutAct_9fa48("271") ? true : (stryCov_9fa48("271", "272"), isDescendant(source, ancestor))) return ancestor;
    return root;
  }
}
function compile<C>(machine: AnyStateMachine): Chart<C> {
  if (stryMutAct_9fa48("273")) {
    {}
  } else {
    stryCov_9fa48("273");
    const rootDef = machine.root as unknown as StateNodeLike;
    const byId = new Map<string, Node<C>>();
    const build = (def: StateNodeLike, parent: Node<C> | undefined): Node<C> => {
      if (stryMutAct_9fa48("274")) {
        {}
      } else {
        stryCov_9fa48("274");
        if (stryMutAct_9fa48("277") ? def.type === "parallel" && def.type === "history" : stryMutAct_9fa48("276") ? false : stryMutAct_9fa48("275") ? true : (stryCov_9fa48("275", "276", "277"), (stryMutAct_9fa48("279") ? def.type !== "parallel" : stryMutAct_9fa48("278") ? false : (stryCov_9fa48("278", "279"), def.type === (stryMutAct_9fa48("280") ? "" : (stryCov_9fa48("280"), "parallel")))) || (stryMutAct_9fa48("282") ? def.type !== "history" : stryMutAct_9fa48("281") ? false : (stryCov_9fa48("281", "282"), def.type === (stryMutAct_9fa48("283") ? "" : (stryCov_9fa48("283"), "history")))))) throw unsupported(stryMutAct_9fa48("284") ? `` : (stryCov_9fa48("284"), `a ${def.type} state`), def.id);
        if (stryMutAct_9fa48("287") ? def.type === "final" || parent?.parent : stryMutAct_9fa48("286") ? false : stryMutAct_9fa48("285") ? true : (stryCov_9fa48("285", "286", "287"), (stryMutAct_9fa48("289") ? def.type !== "final" : stryMutAct_9fa48("288") ? true : (stryCov_9fa48("288", "289"), def.type === (stryMutAct_9fa48("290") ? "" : (stryCov_9fa48("290"), "final")))) && (stryMutAct_9fa48("291") ? parent.parent : (stryCov_9fa48("291"), parent?.parent)))) throw unsupported(stryMutAct_9fa48("292") ? "" : (stryCov_9fa48("292"), "a final state below the top level"), def.id);
        if (stryMutAct_9fa48("296") ? def.after.length <= 0 : stryMutAct_9fa48("295") ? def.after.length >= 0 : stryMutAct_9fa48("294") ? false : stryMutAct_9fa48("293") ? true : (stryCov_9fa48("293", "294", "295", "296"), def.after.length > 0)) throw unsupported(stryMutAct_9fa48("297") ? "" : (stryCov_9fa48("297"), "a delayed transition"), def.id);
        const node: Node<C> = stryMutAct_9fa48("298") ? {} : (stryCov_9fa48("298"), {
          def,
          parent,
          entry: stryMutAct_9fa48("299") ? ["Stryker was here"] : (stryCov_9fa48("299"), []),
          exit: stryMutAct_9fa48("300") ? ["Stryker was here"] : (stryCov_9fa48("300"), []),
          on: new Map(),
          always: stryMutAct_9fa48("301") ? ["Stryker was here"] : (stryCov_9fa48("301"), []),
          initial: undefined,
          final: stryMutAct_9fa48("304") ? def.type !== "final" : stryMutAct_9fa48("303") ? false : stryMutAct_9fa48("302") ? true : (stryCov_9fa48("302", "303", "304"), def.type === (stryMutAct_9fa48("305") ? "" : (stryCov_9fa48("305"), "final"))),
          invoke: def.invoke
        });
        byId.set(def.id, node);
        for (const child of Object.values(def.states)) build(child, node);
        return node;
      }
    };
    const root = build(rootDef, undefined);
    const nodeOf = (def: StateNodeLike): Node<C> => {
      if (stryMutAct_9fa48("306")) {
        {}
      } else {
        stryCov_9fa48("306");
        const node = byId.get(def.id);
        if (stryMutAct_9fa48("309") ? false : stryMutAct_9fa48("308") ? true : stryMutAct_9fa48("307") ? node : (stryCov_9fa48("307", "308", "309"), !node)) throw new Error(stryMutAct_9fa48("310") ? `` : (stryCov_9fa48("310"), `agentchart interpreter: unknown state '${def.id}'`));
        return node;
      }
    };
    const defaultLeaf = (node: Node<C>, enter: Node<C>[]): Node<C> => {
      if (stryMutAct_9fa48("311")) {
        {}
      } else {
        stryCov_9fa48("311");
        let leaf = node;
        while (stryMutAct_9fa48("312") ? false : (stryCov_9fa48("312"), leaf.initial)) {
          if (stryMutAct_9fa48("313")) {
            {}
          } else {
            stryCov_9fa48("313");
            leaf = leaf.initial;
            enter.push(leaf);
          }
        }
        return leaf;
      }
    };
    const transition = (def: TransitionLike): Transition<C> => {
      if (stryMutAct_9fa48("314")) {
        {}
      } else {
        stryCov_9fa48("314");
        const where = def.source.id;
        if (stryMutAct_9fa48("318") ? (def.target?.length ?? 0) <= 1 : stryMutAct_9fa48("317") ? (def.target?.length ?? 0) >= 1 : stryMutAct_9fa48("316") ? false : stryMutAct_9fa48("315") ? true : (stryCov_9fa48("315", "316", "317", "318"), (stryMutAct_9fa48("319") ? def.target?.length && 0 : (stryCov_9fa48("319"), (stryMutAct_9fa48("320") ? def.target.length : (stryCov_9fa48("320"), def.target?.length)) ?? 0)) > 1)) throw unsupported(stryMutAct_9fa48("321") ? "" : (stryCov_9fa48("321"), "a transition with several targets"), where);
        const guard = (stryMutAct_9fa48("324") ? def.guard !== undefined : stryMutAct_9fa48("323") ? false : stryMutAct_9fa48("322") ? true : (stryCov_9fa48("322", "323", "324"), def.guard === undefined)) ? undefined : compileGuard<C>(machine, def.guard, where);
        const actions = def.actions.map(stryMutAct_9fa48("325") ? () => undefined : (stryCov_9fa48("325"), action => compileAction<C>(machine, action, where)));
        const [targetDef] = stryMutAct_9fa48("326") ? def.target && [] : (stryCov_9fa48("326"), def.target ?? (stryMutAct_9fa48("327") ? ["Stryker was here"] : (stryCov_9fa48("327"), [])));
        if (stryMutAct_9fa48("330") ? false : stryMutAct_9fa48("329") ? true : stryMutAct_9fa48("328") ? targetDef : (stryCov_9fa48("328", "329", "330"), !targetDef)) return stryMutAct_9fa48("331") ? {} : (stryCov_9fa48("331"), {
          def,
          guard,
          actions,
          target: undefined
        });
        const domainDef = domainOf(def, rootDef);
        const domain = nodeOf(domainDef);
        const targetNode = nodeOf(targetDef);
        const enter: Node<C>[] = stryMutAct_9fa48("332") ? ["Stryker was here"] : (stryCov_9fa48("332"), []);
        // The target's ancestors below the domain. None when the target is the domain itself (a
        // transition to its own source without reenter): walking up from it would never meet the
        // domain and would enter every ancestor up to the root again.
        if (stryMutAct_9fa48("335") ? targetNode === domain : stryMutAct_9fa48("334") ? false : stryMutAct_9fa48("333") ? true : (stryCov_9fa48("333", "334", "335"), targetNode !== domain)) for (let node = targetNode.parent; stryMutAct_9fa48("337") ? node || node !== domain : stryMutAct_9fa48("336") ? false : (stryCov_9fa48("336", "337"), node && (stryMutAct_9fa48("339") ? node === domain : stryMutAct_9fa48("338") ? true : (stryCov_9fa48("338", "339"), node !== domain))); node = node.parent) enter.unshift(node);
        if (stryMutAct_9fa48("342") ? (targetDef !== def.source || def.source !== domainDef) && def.reenter : stryMutAct_9fa48("341") ? false : stryMutAct_9fa48("340") ? true : (stryCov_9fa48("340", "341", "342"), (stryMutAct_9fa48("344") ? targetDef !== def.source && def.source !== domainDef : stryMutAct_9fa48("343") ? false : (stryCov_9fa48("343", "344"), (stryMutAct_9fa48("346") ? targetDef === def.source : stryMutAct_9fa48("345") ? false : (stryCov_9fa48("345", "346"), targetDef !== def.source)) || (stryMutAct_9fa48("348") ? def.source === domainDef : stryMutAct_9fa48("347") ? false : (stryCov_9fa48("347", "348"), def.source !== domainDef)))) || def.reenter)) enter.push(targetNode);
        const leaf = defaultLeaf(targetNode, enter);
        return stryMutAct_9fa48("349") ? {} : (stryCov_9fa48("349"), {
          def,
          guard,
          actions,
          target: stryMutAct_9fa48("350") ? {} : (stryCov_9fa48("350"), {
            domain,
            exitDomain: stryMutAct_9fa48("353") ? def.reenter || def.source === domainDef : stryMutAct_9fa48("352") ? false : stryMutAct_9fa48("351") ? true : (stryCov_9fa48("351", "352", "353"), def.reenter && (stryMutAct_9fa48("355") ? def.source !== domainDef : stryMutAct_9fa48("354") ? true : (stryCov_9fa48("354", "355"), def.source === domainDef))),
            enter,
            leaf
          })
        });
      }
    };
    // Initial children first: a transition's entry list follows them down to a leaf.
    for (const node of byId.values()) {
      if (stryMutAct_9fa48("356")) {
        {}
      } else {
        stryCov_9fa48("356");
        const [initialDef] = node.def.initial.target;
        if (stryMutAct_9fa48("359") ? node.def.type === "compound" || initialDef : stryMutAct_9fa48("358") ? false : stryMutAct_9fa48("357") ? true : (stryCov_9fa48("357", "358", "359"), (stryMutAct_9fa48("361") ? node.def.type !== "compound" : stryMutAct_9fa48("360") ? true : (stryCov_9fa48("360", "361"), node.def.type === (stryMutAct_9fa48("362") ? "" : (stryCov_9fa48("362"), "compound")))) && initialDef)) node.initial = nodeOf(initialDef);
      }
    }
    for (const node of byId.values()) {
      if (stryMutAct_9fa48("363")) {
        {}
      } else {
        stryCov_9fa48("363");
        const def = node.def;
        const where = def.id;
        node.entry = (stryMutAct_9fa48("364") ? [] : (stryCov_9fa48("364"), [...def.entry, ...def.initial.actions])).map(stryMutAct_9fa48("365") ? () => undefined : (stryCov_9fa48("365"), action => compileAction<C>(machine, action, where)));
        if (stryMutAct_9fa48("369") ? def.initial.actions.length <= 0 : stryMutAct_9fa48("368") ? def.initial.actions.length >= 0 : stryMutAct_9fa48("367") ? false : stryMutAct_9fa48("366") ? true : (stryCov_9fa48("366", "367", "368", "369"), def.initial.actions.length > 0)) throw unsupported(stryMutAct_9fa48("370") ? "" : (stryCov_9fa48("370"), "initial actions"), where);
        node.exit = def.exit.map(stryMutAct_9fa48("371") ? () => undefined : (stryCov_9fa48("371"), action => compileAction<C>(machine, action, where)));
        for (const invoke of def.invoke) {
          if (stryMutAct_9fa48("372")) {
            {}
          } else {
            stryCov_9fa48("372");
            // XState names an inline actor `xstate.invoke.<index>.<state id>` and finds its logic in
            // the state's config when it starts; this interpreter looks actors up by name only.
            if (stryMutAct_9fa48("375") ? typeof invoke.src !== "string" && INLINE_INVOKE.test(invoke.src) && !(invoke.src in machine.implementations.actors) : stryMutAct_9fa48("374") ? false : stryMutAct_9fa48("373") ? true : (stryCov_9fa48("373", "374", "375"), (stryMutAct_9fa48("377") ? typeof invoke.src === "string" : stryMutAct_9fa48("376") ? false : (stryCov_9fa48("376", "377"), typeof invoke.src !== (stryMutAct_9fa48("378") ? "" : (stryCov_9fa48("378"), "string")))) || (stryMutAct_9fa48("380") ? INLINE_INVOKE.test(invoke.src) || !(invoke.src in machine.implementations.actors) : stryMutAct_9fa48("379") ? false : (stryCov_9fa48("379", "380"), INLINE_INVOKE.test(invoke.src) && (stryMutAct_9fa48("381") ? invoke.src in machine.implementations.actors : (stryCov_9fa48("381"), !(invoke.src in machine.implementations.actors))))))) throw unsupported(stryMutAct_9fa48("382") ? "" : (stryCov_9fa48("382"), "an inline invoked actor"), where);
            if (stryMutAct_9fa48("385") ? invoke.systemId !== undefined && invoke.onSnapshot !== undefined : stryMutAct_9fa48("384") ? false : stryMutAct_9fa48("383") ? true : (stryCov_9fa48("383", "384", "385"), (stryMutAct_9fa48("387") ? invoke.systemId === undefined : stryMutAct_9fa48("386") ? false : (stryCov_9fa48("386", "387"), invoke.systemId !== undefined)) || (stryMutAct_9fa48("389") ? invoke.onSnapshot === undefined : stryMutAct_9fa48("388") ? false : (stryCov_9fa48("388", "389"), invoke.onSnapshot !== undefined)))) throw unsupported(stryMutAct_9fa48("390") ? "" : (stryCov_9fa48("390"), "invoke with systemId or onSnapshot"), where);
          }
        }
        for (const [eventType, list] of def.transitions) {
          if (stryMutAct_9fa48("391")) {
            {}
          } else {
            stryCov_9fa48("391");
            if (stryMutAct_9fa48("393") ? false : stryMutAct_9fa48("392") ? true : (stryCov_9fa48("392", "393"), eventType.includes(stryMutAct_9fa48("394") ? "" : (stryCov_9fa48("394"), "*")))) throw unsupported(stryMutAct_9fa48("395") ? `` : (stryCov_9fa48("395"), `the wildcard event descriptor '${eventType}'`), where);
            node.on.set(eventType, list.map(transition));
          }
        }
        node.always = (stryMutAct_9fa48("396") ? def.always && [] : (stryCov_9fa48("396"), def.always ?? (stryMutAct_9fa48("397") ? ["Stryker was here"] : (stryCov_9fa48("397"), [])))).map(transition);
      }
    }
    return stryMutAct_9fa48("398") ? {} : (stryCov_9fa48("398"), {
      machine,
      root
    });
  }
}
function select<C>(leaf: Node<C>, context: C, event: EventObject): Transition<C> | undefined {
  if (stryMutAct_9fa48("399")) {
    {}
  } else {
    stryCov_9fa48("399");
    let args: GuardArgs<C> | undefined;
    for (let node: Node<C> | undefined = leaf; stryMutAct_9fa48("400") ? false : (stryCov_9fa48("400"), node); node = node.parent) {
      if (stryMutAct_9fa48("401")) {
        {}
      } else {
        stryCov_9fa48("401");
        const candidates = node.on.get(event.type);
        if (stryMutAct_9fa48("404") ? false : stryMutAct_9fa48("403") ? true : stryMutAct_9fa48("402") ? candidates : (stryCov_9fa48("402", "403", "404"), !candidates)) continue;
        for (const transition of candidates) if (stryMutAct_9fa48("407") ? !transition.guard && transition.guard(args ??= {
          context,
          event
        }) : stryMutAct_9fa48("406") ? false : stryMutAct_9fa48("405") ? true : (stryCov_9fa48("405", "406", "407"), (stryMutAct_9fa48("408") ? transition.guard : (stryCov_9fa48("408"), !transition.guard)) || transition.guard(stryMutAct_9fa48("409") ? args &&= {
          context,
          event
        } : (stryCov_9fa48("409"), args ??= stryMutAct_9fa48("410") ? {} : (stryCov_9fa48("410"), {
          context,
          event
        }))))) return transition;
      }
    }
    return undefined;
  }
}
function selectEventless<C>(leaf: Node<C>, context: C, event: EventObject): Transition<C> | undefined {
  if (stryMutAct_9fa48("411")) {
    {}
  } else {
    stryCov_9fa48("411");
    let args: GuardArgs<C> | undefined;
    for (let node: Node<C> | undefined = leaf; stryMutAct_9fa48("412") ? false : (stryCov_9fa48("412"), node); node = node.parent) {
      if (stryMutAct_9fa48("413")) {
        {}
      } else {
        stryCov_9fa48("413");
        for (const transition of node.always) if (stryMutAct_9fa48("416") ? !transition.guard && transition.guard(args ??= {
          context,
          event
        }) : stryMutAct_9fa48("415") ? false : stryMutAct_9fa48("414") ? true : (stryCov_9fa48("414", "415", "416"), (stryMutAct_9fa48("417") ? transition.guard : (stryCov_9fa48("417"), !transition.guard)) || transition.guard(stryMutAct_9fa48("418") ? args &&= {
          context,
          event
        } : (stryCov_9fa48("418"), args ??= stryMutAct_9fa48("419") ? {} : (stryCov_9fa48("419"), {
          context,
          event
        }))))) return transition;
      }
    }
    return undefined;
  }
}
function exitNode<C>(step: Step<C>, node: Node<C>): void {
  if (stryMutAct_9fa48("420")) {
    {}
  } else {
    stryCov_9fa48("420");
    for (const action of node.exit) action(step);
    for (const invoke of node.invoke) step.stopChild(invoke.id);
  }
}
function enterNode<C>(step: Step<C>, node: Node<C>): void {
  if (stryMutAct_9fa48("421")) {
    {}
  } else {
    stryCov_9fa48("421");
    for (const action of node.entry) action(step);
    for (const invoke of node.invoke) {
      if (stryMutAct_9fa48("422")) {
        {}
      } else {
        stryCov_9fa48("422");
        const input = (stryMutAct_9fa48("425") ? typeof invoke.input !== "function" : stryMutAct_9fa48("424") ? false : stryMutAct_9fa48("423") ? true : (stryCov_9fa48("423", "424", "425"), typeof invoke.input === (stryMutAct_9fa48("426") ? "" : (stryCov_9fa48("426"), "function")))) ? (invoke.input as (args: {
          context: C;
          event: EventObject;
          self: AnyActorRef;
        }) => unknown)(stryMutAct_9fa48("427") ? {} : (stryCov_9fa48("427"), {
          context: step.context,
          event: step.event,
          self: step.scope.self
        })) : invoke.input;
        step.spawn(invoke.src as string, invoke.id, input);
      }
    }
    if (stryMutAct_9fa48("429") ? false : stryMutAct_9fa48("428") ? true : (stryCov_9fa48("428", "429"), node.final)) {
      if (stryMutAct_9fa48("430")) {
        {}
      } else {
        stryCov_9fa48("430");
        step.status = stryMutAct_9fa48("431") ? "" : (stryCov_9fa48("431"), "done");
        const output = step.chart.root.def.output;
        step.output = (stryMutAct_9fa48("434") ? typeof output !== "function" : stryMutAct_9fa48("433") ? false : stryMutAct_9fa48("432") ? true : (stryCov_9fa48("432", "433", "434"), typeof output === (stryMutAct_9fa48("435") ? "" : (stryCov_9fa48("435"), "function")))) ? (output as (args: {
          context: C;
          event: EventObject;
          self: AnyActorRef;
        }) => unknown)(stryMutAct_9fa48("436") ? {} : (stryCov_9fa48("436"), {
          context: step.context,
          event: stryMutAct_9fa48("437") ? {} : (stryCov_9fa48("437"), {
            type: stryMutAct_9fa48("438") ? `` : (stryCov_9fa48("438"), `xstate.done.state.${node.def.id}`)
          }),
          self: step.scope.self
        })) : output;
      }
    }
  }
}

/** One microstep: exit, the transition's actions, entry (SCXML's order, as XState runs it). */
function microstep<C>(step: Step<C>, transition: Transition<C>): void {
  if (stryMutAct_9fa48("439")) {
    {}
  } else {
    stryCov_9fa48("439");
    const target = transition.target;
    if (stryMutAct_9fa48("441") ? false : stryMutAct_9fa48("440") ? true : (stryCov_9fa48("440", "441"), target)) {
      if (stryMutAct_9fa48("442")) {
        {}
      } else {
        stryCov_9fa48("442");
        for (let node: Node<C> | undefined = step.leaf; stryMutAct_9fa48("444") ? node || node !== target.domain : stryMutAct_9fa48("443") ? false : (stryCov_9fa48("443", "444"), node && (stryMutAct_9fa48("446") ? node === target.domain : stryMutAct_9fa48("445") ? true : (stryCov_9fa48("445", "446"), node !== target.domain))); node = node.parent) exitNode(step, node);
        if (stryMutAct_9fa48("448") ? false : stryMutAct_9fa48("447") ? true : (stryCov_9fa48("447", "448"), target.exitDomain)) exitNode(step, target.domain);
        step.changed = stryMutAct_9fa48("449") ? false : (stryCov_9fa48("449"), true);
      }
    }
    for (const action of transition.actions) action(step);
    if (stryMutAct_9fa48("451") ? false : stryMutAct_9fa48("450") ? true : (stryCov_9fa48("450", "451"), target)) {
      if (stryMutAct_9fa48("452")) {
        {}
      } else {
        stryCov_9fa48("452");
        for (const node of target.enter) enterNode(step, node);
        step.leaf = target.leaf;
      }
    }
    if (stryMutAct_9fa48("455") ? step.status !== "done" : stryMutAct_9fa48("454") ? false : stryMutAct_9fa48("453") ? true : (stryCov_9fa48("453", "454", "455"), step.status === (stryMutAct_9fa48("456") ? "" : (stryCov_9fa48("456"), "done")))) {
      if (stryMutAct_9fa48("457")) {
        {}
      } else {
        stryCov_9fa48("457");
        for (let node: Node<C> | undefined = step.leaf; stryMutAct_9fa48("458") ? false : (stryCov_9fa48("458"), node); node = node.parent) for (const action of node.exit) action(step);
      }
    }
  }
}

/**
 * Whether inspection records are wanted: a lean system says; XState's system does not, so its
 * records are always built (and dropped by it when nobody inspects).
 */
function inspecting(system: SystemInternals): boolean {
  if (stryMutAct_9fa48("459")) {
    {}
  } else {
    stryCov_9fa48("459");
    return stryMutAct_9fa48("462") ? (system as {
      inspecting?: boolean;
    }).inspecting === false : stryMutAct_9fa48("461") ? false : stryMutAct_9fa48("460") ? true : (stryCov_9fa48("460", "461", "462"), (system as {
      inspecting?: boolean;
    }).inspecting !== (stryMutAct_9fa48("463") ? true : (stryCov_9fa48("463"), false)));
  }
}
function inspectMicrostep<C>(step: Step<C>, event: EventObject, transition: Transition<C> | undefined): void {
  if (stryMutAct_9fa48("464")) {
    {}
  } else {
    stryCov_9fa48("464");
    if (stryMutAct_9fa48("467") ? false : stryMutAct_9fa48("466") ? true : stryMutAct_9fa48("465") ? inspecting(step.system) : (stryCov_9fa48("465", "466", "467"), !inspecting(step.system))) return;
    step.system._sendInspectionEvent(stryMutAct_9fa48("468") ? {} : (stryCov_9fa48("468"), {
      type: stryMutAct_9fa48("469") ? "" : (stryCov_9fa48("469"), "@xstate.microstep"),
      actorRef: step.scope.self,
      event,
      snapshot: step.snapshot(),
      _transitions: transition ? stryMutAct_9fa48("470") ? [] : (stryCov_9fa48("470"), [transition.def]) : stryMutAct_9fa48("471") ? ["Stryker was here"] : (stryCov_9fa48("471"), [])
    }));
  }
}

/** Eventless transitions and raised events until the chart rests (XState's macrostep loop). */
function settle<C>(step: Step<C>): void {
  if (stryMutAct_9fa48("472")) {
    {}
  } else {
    stryCov_9fa48("472");
    let eventless = stryMutAct_9fa48("473") ? false : (stryCov_9fa48("473"), true);
    let iterations = 0;
    while (stryMutAct_9fa48("475") ? step.status !== "active" : stryMutAct_9fa48("474") ? false : (stryCov_9fa48("474", "475"), step.status === (stryMutAct_9fa48("476") ? "" : (stryCov_9fa48("476"), "active")))) {
      if (stryMutAct_9fa48("477")) {
        {}
      } else {
        stryCov_9fa48("477");
        if (stryMutAct_9fa48("481") ? ++iterations <= 10_000 : stryMutAct_9fa48("480") ? ++iterations >= 10_000 : stryMutAct_9fa48("479") ? false : stryMutAct_9fa48("478") ? true : (stryCov_9fa48("478", "479", "480", "481"), (stryMutAct_9fa48("482") ? --iterations : (stryCov_9fa48("482"), ++iterations)) > 10_000)) throw new Error(stryMutAct_9fa48("483") ? `` : (stryCov_9fa48("483"), `agentchart interpreter: more than 10,000 microsteps without the chart coming to rest (in '${step.leaf.def.id}')`));
        let transition: Transition<C> | undefined = eventless ? selectEventless(step.leaf, step.context, step.event) : undefined;
        const fromEventless: boolean = stryMutAct_9fa48("486") ? transition === undefined : stryMutAct_9fa48("485") ? false : stryMutAct_9fa48("484") ? true : (stryCov_9fa48("484", "485", "486"), transition !== undefined);
        if (stryMutAct_9fa48("489") ? false : stryMutAct_9fa48("488") ? true : stryMutAct_9fa48("487") ? transition : (stryCov_9fa48("487", "488", "489"), !transition)) {
          if (stryMutAct_9fa48("490")) {
            {}
          } else {
            stryCov_9fa48("490");
            const next = step.internal.shift();
            if (stryMutAct_9fa48("493") ? false : stryMutAct_9fa48("492") ? true : stryMutAct_9fa48("491") ? next : (stryCov_9fa48("491", "492", "493"), !next)) break;
            step.event = next;
            transition = select(step.leaf, step.context, next);
            if (stryMutAct_9fa48("496") ? false : stryMutAct_9fa48("495") ? true : stryMutAct_9fa48("494") ? transition : (stryCov_9fa48("494", "495", "496"), !transition)) {
              if (stryMutAct_9fa48("497")) {
                {}
              } else {
                stryCov_9fa48("497");
                eventless = stryMutAct_9fa48("498") ? false : (stryCov_9fa48("498"), true);
                continue;
              }
            }
          }
        }
        step.changed = stryMutAct_9fa48("499") ? true : (stryCov_9fa48("499"), false);
        microstep(step, transition);
        eventless = stryMutAct_9fa48("502") ? !fromEventless && step.changed : stryMutAct_9fa48("501") ? false : stryMutAct_9fa48("500") ? true : (stryCov_9fa48("500", "501", "502"), (stryMutAct_9fa48("503") ? fromEventless : (stryCov_9fa48("503"), !fromEventless)) || step.changed);
        inspectMicrostep(step, step.event, transition);
      }
    }
    if (stryMutAct_9fa48("506") ? step.status === "active" : stryMutAct_9fa48("505") ? false : stryMutAct_9fa48("504") ? true : (stryCov_9fa48("504", "505", "506"), step.status !== (stryMutAct_9fa48("507") ? "" : (stryCov_9fa48("507"), "active")))) {
      if (stryMutAct_9fa48("508")) {
        {}
      } else {
        stryCov_9fa48("508");
        // Stopped, yet still listed in the final snapshot: XState's macrostep drops the children it
        // stops here from its result, and snapshots must read the same on both interpreters.
        const listed = stryMutAct_9fa48("509") ? {} : (stryCov_9fa48("509"), {
          ...step.children
        });
        for (const id of Object.keys(listed)) step.stopChild(id);
        step.children = listed;
      }
    }
  }
}
const charts = new WeakMap<AnyStateMachine, Chart<unknown>>();

/** The compiled chart of a machine (compiled once per machine). */
function chartOf<C>(machine: AnyStateMachine): Chart<C> {
  if (stryMutAct_9fa48("510")) {
    {}
  } else {
    stryCov_9fa48("510");
    let chart = charts.get(machine);
    if (stryMutAct_9fa48("513") ? false : stryMutAct_9fa48("512") ? true : stryMutAct_9fa48("511") ? chart : (stryCov_9fa48("511", "512", "513"), !chart)) {
      if (stryMutAct_9fa48("514")) {
        {}
      } else {
        stryCov_9fa48("514");
        chart = compile<unknown>(machine);
        charts.set(machine, chart);
      }
    }
    return chart as Chart<C>;
  }
}

/** The actor logic {@link chartLogic} returns. */
export type ChartLogic<C, E extends EventObject, I, O, Emitted extends EventObject> = ActorLogic<ChartSnapshot<C, O>, E, I, AnyActorSystem, Emitted>;

/**
 * The actor logic that runs `machine`'s chart with agentchart's interpreter: give it to
 * XState's `createActor` (or `invoke`/`spawn` it) where you would give the machine. Same
 * states, transitions, guards, actions, children and event order; snapshots carry `status`,
 * `value`, `context`, `children`, `output`, `error` and `matches()`. Throws when the machine
 * uses a feature outside the supported subset (see the module comment).
 *
 * @example
 * import { createActor } from "xstate";
 * const actor = createActor(chartLogic(agentMachine), { input: { config: { streamFn } } }).start();
 * actor.send({ type: "prompt", messages: [{ role: "user", content: "hi", timestamp: Date.now() }] });
 */
export function chartLogic<TMachine extends AnyStateMachine>(machine: TMachine): ChartLogic<ContextFrom<TMachine>, EventFromLogic<TMachine>, InputFrom<TMachine>, OutputFrom<TMachine>, EmittedFrom<TMachine>> {
  if (stryMutAct_9fa48("515")) {
    {}
  } else {
    stryCov_9fa48("515");
    type C = ContextFrom<TMachine>;
    const chart = chartOf<C>(machine);
    type Scope = AnyActorScope;
    const logic = stryMutAct_9fa48("516") ? {} : (stryCov_9fa48("516"), {
      config: machine.config,
      getInitialSnapshot(scope: Scope, input: unknown): ChartState<C> {
        if (stryMutAct_9fa48("517")) {
          {}
        } else {
          stryCov_9fa48("517");
          const init = stryMutAct_9fa48("518") ? {} : (stryCov_9fa48("518"), {
            type: stryMutAct_9fa48("519") ? "" : (stryCov_9fa48("519"), "xstate.init"),
            input
          });
          const contextConfig = machine.config.context as unknown;
          const context = (typeof contextConfig === "function" ? (contextConfig as (args: {
            input: unknown;
            self: AnyActorRef;
            spawn: () => never;
          }) => C)({
            input,
            self: scope.self,
            spawn: () => {
              throw unsupported("spawn in the initial context", machine.id);
            }
          }) : contextConfig ?? {}) as C;
          const step = new Step<C>(chart, scope, stryMutAct_9fa48("520") ? {} : (stryCov_9fa48("520"), {
            context,
            children: {},
            _leaf: chart.root
          }), init);
          const enter: Node<C>[] = stryMutAct_9fa48("521") ? [] : (stryCov_9fa48("521"), [chart.root]);
          let leaf = chart.root;
          while (stryMutAct_9fa48("522") ? false : (stryCov_9fa48("522"), leaf.initial)) {
            if (stryMutAct_9fa48("523")) {
              {}
            } else {
              stryCov_9fa48("523");
              leaf = leaf.initial;
              enter.push(leaf);
            }
          }
          for (const node of enter) enterNode(step, node);
          step.leaf = leaf;
          settle(step);
          return step.snapshot();
        }
      },
      transition(snapshot: ChartState<C>, event: EventObject, scope: Scope): ChartState<C> {
        if (stryMutAct_9fa48("524")) {
          {}
        } else {
          stryCov_9fa48("524");
          if (stryMutAct_9fa48("527") ? snapshot.status === "active" : stryMutAct_9fa48("526") ? false : stryMutAct_9fa48("525") ? true : (stryCov_9fa48("525", "526", "527"), snapshot.status !== (stryMutAct_9fa48("528") ? "" : (stryCov_9fa48("528"), "active")))) return snapshot;
          const step = new Step<C>(chart, scope, snapshot, event);
          if (stryMutAct_9fa48("531") ? event.type !== "xstate.stop" : stryMutAct_9fa48("530") ? false : stryMutAct_9fa48("529") ? true : (stryCov_9fa48("529", "530", "531"), event.type === (stryMutAct_9fa48("532") ? "" : (stryCov_9fa48("532"), "xstate.stop")))) {
            if (stryMutAct_9fa48("533")) {
              {}
            } else {
              stryCov_9fa48("533");
              for (const id of Object.keys(step.children)) step.stopChild(id);
              return new ChartState(stryMutAct_9fa48("534") ? "" : (stryCov_9fa48("534"), "stopped"), step.context, step.children, step.leaf, snapshot.output, snapshot.error);
            }
          }
          const transition = select(step.leaf, step.context, event);
          if (stryMutAct_9fa48("537") ? !transition || event.type.startsWith("xstate.error.actor") : stryMutAct_9fa48("536") ? false : stryMutAct_9fa48("535") ? true : (stryCov_9fa48("535", "536", "537"), (stryMutAct_9fa48("538") ? transition : (stryCov_9fa48("538"), !transition)) && (stryMutAct_9fa48("539") ? event.type.endsWith("xstate.error.actor") : (stryCov_9fa48("539"), event.type.startsWith(stryMutAct_9fa48("540") ? "" : (stryCov_9fa48("540"), "xstate.error.actor")))))) {
            if (stryMutAct_9fa48("541")) {
              {}
            } else {
              stryCov_9fa48("541");
              // A child failed and nothing handles it: the chart fails with its error (as XState's does).
              for (const id of Object.keys(step.children)) step.stopChild(id);
              return new ChartState(stryMutAct_9fa48("542") ? "" : (stryCov_9fa48("542"), "error"), step.context, step.children, step.leaf, undefined, (event as {
                error?: unknown;
              }).error);
            }
          }
          if (stryMutAct_9fa48("544") ? false : stryMutAct_9fa48("543") ? true : (stryCov_9fa48("543", "544"), transition)) microstep(step, transition);
          inspectMicrostep(step, event, transition);
          settle(step);
          if (stryMutAct_9fa48("547") ? step.status === "active" && step.context === snapshot.context && step.children === snapshot.children || step.leaf === snapshot._leaf : stryMutAct_9fa48("546") ? false : stryMutAct_9fa48("545") ? true : (stryCov_9fa48("545", "546", "547"), (stryMutAct_9fa48("549") ? step.status === "active" && step.context === snapshot.context || step.children === snapshot.children : stryMutAct_9fa48("548") ? true : (stryCov_9fa48("548", "549"), (stryMutAct_9fa48("551") ? step.status === "active" || step.context === snapshot.context : stryMutAct_9fa48("550") ? true : (stryCov_9fa48("550", "551"), (stryMutAct_9fa48("553") ? step.status !== "active" : stryMutAct_9fa48("552") ? true : (stryCov_9fa48("552", "553"), step.status === (stryMutAct_9fa48("554") ? "" : (stryCov_9fa48("554"), "active")))) && (stryMutAct_9fa48("556") ? step.context !== snapshot.context : stryMutAct_9fa48("555") ? true : (stryCov_9fa48("555", "556"), step.context === snapshot.context)))) && (stryMutAct_9fa48("558") ? step.children !== snapshot.children : stryMutAct_9fa48("557") ? true : (stryCov_9fa48("557", "558"), step.children === snapshot.children)))) && (stryMutAct_9fa48("560") ? step.leaf !== snapshot._leaf : stryMutAct_9fa48("559") ? true : (stryCov_9fa48("559", "560"), step.leaf === snapshot._leaf)))) return snapshot;
          return step.snapshot();
        }
      },
      getPersistedSnapshot(snapshot: ChartState<C>) {
        if (stryMutAct_9fa48("561")) {
          {}
        } else {
          stryCov_9fa48("561");
          const children: Record<string, unknown> = {};
          for (const [id, child] of Object.entries(snapshot.children)) {
            if (stryMutAct_9fa48("562")) {
              {}
            } else {
              stryCov_9fa48("562");
              if (stryMutAct_9fa48("564") ? false : stryMutAct_9fa48("563") ? true : (stryCov_9fa48("563", "564"), child)) children[id] = stryMutAct_9fa48("565") ? {} : (stryCov_9fa48("565"), {
                snapshot: stryMutAct_9fa48("566") ? child.getPersistedSnapshot() : (stryCov_9fa48("566"), child.getPersistedSnapshot?.()),
                src: (child as {
                  src?: unknown;
                }).src,
                syncSnapshot: stryMutAct_9fa48("567") ? true : (stryCov_9fa48("567"), false)
              });
            }
          }
          return stryMutAct_9fa48("568") ? {} : (stryCov_9fa48("568"), {
            status: snapshot.status,
            value: snapshot.value,
            context: snapshot.context,
            children,
            output: snapshot.output,
            error: snapshot.error
          });
        }
      }
    });
    return logic as unknown as ChartLogic<C, EventFromLogic<TMachine>, InputFrom<TMachine>, OutputFrom<TMachine>, EmittedFrom<TMachine>>;
  }
}