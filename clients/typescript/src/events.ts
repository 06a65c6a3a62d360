import {
  type components,
  pathsApiV1AlertsGetParametersQueryCondition_typeValues,
  webhookCreateEvent_typesValues,
} from './openapi.js';

/**
 * Events as the service describes them (its OpenAPI document, `Event`): a union on `type`, so
 * `data` is known once `type` is looked at, without a cast:
 *
 *     if (event.type === 'alert.triggered') console.log(event.data.message); // an AlertEvent
 *
 * The same shape comes from GET /events and in every webhook delivery (`verifyWebhook`).
 */
export type Event = components['schemas']['Event'];
export type EventType = Event['type'];
/** The event of one type, e.g. `EventOf<'price.changed'>` (its `data` a PriceChange). */
export type EventOf<T extends EventType> = Extract<Event, { type: T }>;
/** What an event of type `T` carries in `data`. */
export type EventData<T extends EventType> = EventOf<T>['data'];

/** Every event type, in the service's order (generated from the document: a new type appears here by itself). */
export const EVENT_TYPES: readonly EventType[] = webhookCreateEvent_typesValues;

export type AlertCondition = components['schemas']['AlertCondition'];
export type ConditionType = AlertCondition['type'];
/** Every alert condition type, from the document. */
export const CONDITION_TYPES: readonly ConditionType[] = pathsApiV1AlertsGetParametersQueryCondition_typeValues;
