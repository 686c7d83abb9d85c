/**
 * Typed placeholders for the actors the runtime provides (Kibana's `getPlaceholderFor`): the
 * machine declares an actor by the type of the factory that builds it, so `machine.provide(...)`
 * is checked against what the runtime really passes, and an unprovided actor fails with its name
 * as soon as it starts.
 */
import type { AnyActorLogic } from "xstate";

export function getPlaceholderFor<F extends (...args: never[]) => AnyActorLogic>(name: string): ReturnType<F> {
  const placeholder = {
    transition: (snapshot: unknown) => snapshot,
    start: () => {
      throw new Error(`the "${name}" actor is not provided`);
    },
    getInitialSnapshot: () => ({ status: "active", output: undefined, error: undefined }),
    getPersistedSnapshot: (snapshot: unknown) => snapshot,
    restoreSnapshot: (snapshot: unknown) => snapshot,
  };
  return placeholder as unknown as ReturnType<F>;
}
