/**
 * SPEC R13: a child that finished just before its parent was persisted, its done (or error) event
 * not yet taken by the parent, is restored finished, and XState starts only active children, so
 * that event would never come and the restored parent would wait forever. A restored parent gets
 * it again here.
 */
import type { AnyActorRef } from "xstate";

export function redeliverFinishedChildren(parent: AnyActorRef, except?: AnyActorRef): void {
  const children = (parent.getSnapshot() as { children?: Record<string, AnyActorRef | undefined> }).children ?? {};
  for (const [id, child] of Object.entries(children)) {
    if (!child || child === except) continue;
    const snapshot = child.getSnapshot() as { status: string; output?: unknown; error?: unknown };
    if (snapshot.status === "done") parent.send({ type: `xstate.done.actor.${id}`, output: snapshot.output, actorId: id });
    else if (snapshot.status === "error") parent.send({ type: `xstate.error.actor.${id}`, error: snapshot.error, actorId: id });
  }
}
