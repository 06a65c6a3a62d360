import type { App } from '../../src/app.js';
import { Contract, fetchDocument } from '../openapi/support.js';

/**
 * Events as the OpenAPI document describes them (src/events/payloads.ts: a variant per type,
 * each with its `data`): real events are checked against the document's `Event`, so a type
 * whose data drifts from its documented resource fails where that type is made. Not a test file.
 */
const contracts = new WeakMap<App, Promise<Contract>>();

export async function assertDocumentedEvents(app: App, events: readonly unknown[]): Promise<void> {
  let c = contracts.get(app);
  if (!c) contracts.set(app, (c = fetchDocument(app).then((doc) => new Contract(doc))));
  const contract = await c;
  for (const e of events) {
    contract.validate({ $ref: '#/components/schemas/Event' }, e, `event ${(e as { type?: string }).type}`);
  }
}
