/** The usage area's public face: the recorder the auth hook counts requests with. */
export type { UsageRecorder } from './recorder.js';
