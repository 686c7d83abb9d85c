/**
 * The one placeholder convention of the machines: an actor, an action or a guard the runtime provides
 * (`machine.provide(...)`, from its `create…Implementations`) is declared in the machine by a
 * placeholder that fails with its name if it was not provided. An actor's placeholder is typed by
 * its logic type, declared machine-side (`StepWorkerLogic`, `PromiseActorLogic<…>`), so `provide`
 * is checked against it without the machine importing the runtime that builds it.
 */
import type { AnyActorLogic } from "xstate";

/** An actor the runtime provides, typed by its logic; starting it unprovided throws. */
export function placeholderActor<TLogic extends AnyActorLogic>(name: string): TLogic {
  const placeholder = {
    transition: (snapshot: unknown) => snapshot,
    start: () => {
      throw new Error(`the "${name}" actor is not provided`);
    },
    getInitialSnapshot: () => ({ status: "active", output: undefined, error: undefined }),
    getPersistedSnapshot: (snapshot: unknown) => snapshot,
    restoreSnapshot: (snapshot: unknown) => snapshot,
  };
  return placeholder as unknown as TLogic;
}

/** An action the runtime provides (with params `TParams`); executing it unprovided throws. */
export function placeholderAction<TParams = undefined>(name: string): (args: unknown, params: TParams) => void {
  return () => {
    throw new Error(`the "${name}" action is not provided`);
  };
}

/**
 * A guard the runtime provides: a question only it can answer about what it holds outside the
 * machine (never app code, R15); evaluating it unprovided throws.
 */
export function placeholderGuard(name: string): () => boolean {
  return () => {
    throw new Error(`the "${name}" guard is not provided`);
  };
}
