import type { FastifyInstance } from 'fastify';
import type { EmailContext } from '../service.js';
import { EmailSecrets } from '../tokens.js';

const contexts = new WeakMap<object, EmailContext>();

/** The email services of an app, built once from its context (the secrets derive keys). */
export function emailContext(app: FastifyInstance): EmailContext {
  let ctx = contexts.get(app.ctx);
  if (!ctx) {
    ctx = { db: app.ctx.db, settings: app.ctx.config, secrets: new EmailSecrets(app.ctx.deploymentKey) };
    contexts.set(app.ctx, ctx);
  }
  return ctx;
}
