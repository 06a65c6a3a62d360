/** The rate limiter's public face: what the auth hook and the metrics see of it. */
export type { Outcome, RateLimiter, Window, WindowState } from './limiter.js';
