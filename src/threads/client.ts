/**
 * The parent's side of a worker thread that serves calls (serve.ts): each call gets an id and
 * a promise settled by the thread's answer; the thread's errors come back as Errors with the
 * fields they had there. The thread keeps the process alive only while an answer is awaited.
 * Once the thread is gone (it failed or exited) every pending and later call fails.
 */
import { Worker } from 'node:worker_threads';
import { type Answer, type Call, type Methods, READY_ID } from './protocol.js';

type Result<F> = F extends (...args: never[]) => infer R ? Awaited<R> : never;

export interface ThreadClientOptions {
  /** Names the thread in the error its exit gives: "<name> exited with code 1". */
  name: string;
  workerData?: unknown;
  /** The thread announces when it is ready (serveThread given a promise); `ready` waits for it. */
  handshake?: boolean;
  /** What pending and later calls fail with once the thread is gone (default: the cause). */
  failure?: (cause: Error) => Error;
  /** The thread's notifications (serve.ts's notifyParent). */
  onNotify?: (channel: number, value: unknown) => void;
}

/**
 * `module` names the thread's file as built (foo.js in dist). Run from source (tsx: tests, `npm
 * run dev`) it is foo.ts, and a worker thread does not inherit tsx's loader, so it registers
 * it first.
 */
function startWorker(module: URL, workerData: unknown): Worker {
  const fromSource = import.meta.url.endsWith('.ts');
  if (!fromSource) return new Worker(module, { workerData });
  const url = new URL(module.href.replace(/\.js$/, '.ts'));
  const api = JSON.stringify(import.meta.resolve('tsx/esm/api'));
  return new Worker(`import(${api}).then((tsx) => { tsx.register(); return import(${JSON.stringify(url.href)}); })`, {
    eval: true,
    workerData,
  });
}

interface Pending {
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
}

export class ThreadClient<M extends Methods<M>> {
  /** Settles with the thread's announcement (at once without a handshake). */
  readonly ready: Promise<void>;
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private nextId = READY_ID + 1;
  private gone: Error | undefined;

  constructor(
    module: URL,
    private readonly opts: ThreadClientOptions,
  ) {
    this.worker = startWorker(module, opts.workerData);
    this.ready = opts.handshake
      ? new Promise<void>((resolve, reject) => this.pending.set(READY_ID, { resolve: () => resolve(), reject }))
      : Promise.resolve();
    if (this.pending.size === 0) this.worker.unref();
    this.worker.on('message', (a: Answer) => this.answered(a));
    this.worker.on('error', (err: Error) => this.die(err));
    this.worker.on('exit', (code) => this.die(new Error(`${opts.name} exited with code ${code}`)));
  }

  /** Calls awaiting their answer. */
  get waiting(): number {
    return this.pending.size;
  }

  /** The thread failed or exited: calls fail at once. */
  get dead(): boolean {
    return this.gone !== undefined;
  }

  call<K extends keyof M & string>(method: K, ...arg: Parameters<M[K]>): Promise<Result<M[K]>> {
    if (this.gone) return Promise.reject(this.gone);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.worker.ref();
      this.worker.postMessage({ id, m: method, a: arg[0] } satisfies Call);
    });
  }

  /** Stops the thread; calls still pending fail as on any exit. */
  async terminate(): Promise<void> {
    await this.worker.terminate();
  }

  private answered(a: Answer): void {
    if ('n' in a) {
      this.opts.onNotify?.(a.n, a.v);
      return;
    }
    const p = this.pending.get(a.id);
    if (!p) return;
    this.pending.delete(a.id);
    if (this.pending.size === 0) this.worker.unref();
    if (a.ok) p.resolve(a.v);
    else p.reject(Object.assign(new Error(a.e.message), a.e));
  }

  private die(cause: Error): void {
    this.gone ??= this.opts.failure ? this.opts.failure(cause) : cause;
    for (const p of this.pending.values()) p.reject(this.gone);
    this.pending.clear();
  }
}
