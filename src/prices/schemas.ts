/** The prices area's schemas other areas show (an event's payload). */
export { PriceChangeSchema } from './changes/schemas.js';
