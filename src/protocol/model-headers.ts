/**
 * R14: a model's `headers` (pi-ai's `Model.headers`: transport settings, often a key such as
 * `x-api-key`) never enter machine context, input or snapshots. The model there has none; whoever
 * makes the requests (a run's runtime, an Agent) keeps them by model (api, provider, id, baseUrl)
 * and sends them with each request, so a restored run gets them from the model it is given again.
 */
import type { Model } from "./messages.js";

type Headers = NonNullable<Model["headers"]>;

/** Where headers are kept: by model (api, provider, id); no table until a model with headers is seen. */
export interface HeadersHolder {
  modelHeaders: Map<string, Headers> | undefined;
}

const keyOf = (model: Model) => `${model.api}\u0000${model.provider}\u0000${model.id}\u0000${model.baseUrl ?? ""}`;

/** `model` without its headers (the same object when it has none). */
export function withoutHeaders(model: Model): Model {
  if (model.headers === undefined) return model;
  const { headers: _headers, ...rest } = model;
  return rest;
}

/** `model` without its headers, which `holder` keeps for `withHeaders` (a model given without headers has none: a key removed stays removed). */
export function keepHeaders(holder: HeadersHolder, model: Model): Model {
  if (model.headers === undefined) {
    holder.modelHeaders?.delete(keyOf(model));
    return model;
  }
  (holder.modelHeaders ??= new Map()).set(keyOf(model), model.headers);
  return withoutHeaders(model);
}

/** `model` with the headers `holder` keeps for it, if any. */
export function withHeaders(holder: HeadersHolder, model: Model): Model {
  const headers = holder.modelHeaders?.get(keyOf(model));
  return headers === undefined || model.headers !== undefined ? model : { ...model, headers };
}
